# Written for netgw's attribute oracle test (tests/it/chef_attrs.rs): one of every literal and level.
default['net']['vlans'] = { '10' => { 'name' => 'users' }, '20' => { 'name' => 'voice' } }
default['net']['uplinks'] = %w(et1 et2)
default['net']['mtu'] = 9214
default['net']['domain'] = 'example.net'
default[:net][:sym_key] = :a_symbol
default['net']['numbers'] = [1, 2.5, 0x10, -3]
default['net']['flags'] = { 'lldp' => true, 'stp' => false, 'none' => nil }
default['net']['ruby_style'] = { a: 1, 'b' => [{ c: :d }] }
default['net']['role_array'] = ['file']
default['net']['heredoc'] = <<~TEXT
  banner for #{node['net']['domain']}
TEXT
force_default['net']['forced'] = 'fd'
normal['net']['normal_only'] = 'n'
override['net']['mtu'] = 1500
