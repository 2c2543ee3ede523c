name 'site'
version '0.2.0'
depends 'base'
depends 'netdev'
