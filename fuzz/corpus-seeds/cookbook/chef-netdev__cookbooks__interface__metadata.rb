name    'interface'
depends 'netdev'
