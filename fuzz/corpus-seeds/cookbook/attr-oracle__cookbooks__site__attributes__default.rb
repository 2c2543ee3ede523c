# Reads what base's files set, the role's and environment's attributes and this run's facts.
node['net']['vlans'].each do |id, v|
  default['site']['vlan_names'][id] = v['name'].upcase
end
case node['platform']
when 'eos' then default['site']['os'] = 'arista'
when 'junos', 'junos-evo' then default['site']['os'] = 'juniper'
else default['site']['os'] = 'other'
end
default['site']['eos4'] = node['platform_version'].to_s.start_with?('4.') ? 'yes' : 'no'
(1..3).each do |i|
  default['site']['ports']["et#{i}"] = { 'enabled' => i != 2, 'mtu' => node['net']['mtu'] }
end
node.override['site']['ovr'] = 'o'
default['site']['role_seen'] = node['role_attr']
default['site']['env_seen'] = node['env_attr']
default['site']['has_vlans'] = node.attribute?('net') && !node['net']['vlans'].empty?
default['site']['dig'] = node.dig('net', 'ovr', 'a')
