name    'group'
depends 'netdev'
