# A later cookbook replacing hashes and arrays that earlier cookbooks set, at several levels.
default['site']['ports'] = {}
default['site']['ports']['et9'] = { 'enabled' => true }
override['net']['ovr'] = { 'b' => 2 }
normal['net']['normal_only'] = { 'now' => 'a hash' }
default['net']['role_array'] = ['later']
default['later']['order'] = [node['site']['os'], node['site']['mtu_now']]
