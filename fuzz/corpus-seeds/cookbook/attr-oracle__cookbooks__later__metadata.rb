name 'later'
depends 'site'
