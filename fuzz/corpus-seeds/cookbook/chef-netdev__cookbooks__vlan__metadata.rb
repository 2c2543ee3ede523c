name    'vlan'
depends 'netdev'
