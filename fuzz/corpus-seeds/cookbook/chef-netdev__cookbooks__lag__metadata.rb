name    'lag'
depends 'netdev'
