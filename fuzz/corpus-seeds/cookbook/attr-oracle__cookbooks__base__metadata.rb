name 'base'
version '1.0.0'
