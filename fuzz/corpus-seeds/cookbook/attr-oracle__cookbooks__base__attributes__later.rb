# Loaded after default.rb (lexical order): a whole-hash assignment replaces default.rb's hash.
default['net']['vlans'] = { '30' => { 'name' => 'guests' } }
default['net']['vlans']['30']['description'] = "guests on #{node['net']['domain']}"
default['net']['uplinks'] += ['et3']
default_unless['net']['mtu'] = 1
default_unless['net']['new_key'] = 'u'
# Chef's auto-vivification: the read half of `||=` creates {} for a missing key, so nothing is set.
default['net']['counter'] ||= 5
default['net']['domain'] ||= 'other.net'
default['net']['mtu_plus'] = node['net']['mtu'] + 1
override['net']['ovr'] = { 'a' => 1 }
node.default['net']['mtu_seen'] = node['net']['mtu']
