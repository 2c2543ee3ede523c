name    'l2_interface'
depends 'netdev'
