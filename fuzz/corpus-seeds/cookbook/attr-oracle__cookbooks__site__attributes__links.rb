default['net']['flags'] = { 'lldp' => false }
default['site']['list'] = node['net']['uplinks'].map { |u| "#{u}-x" }
default['site']['keys'] = node['net']['vlans'].keys.sort
default['site']['joined'] = node['net']['uplinks'].join(',')
force_override['net']['mtu'] = 9000
unless node['site']['os'] == 'arista'
  default['site']['not_arista'] = true
end
default['site']['mtu_now'] = node['net']['mtu']
