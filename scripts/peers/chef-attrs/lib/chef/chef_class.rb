# Written for netgw, not Chef's file: the one method of the Chef class (lib/chef/chef_class.rb) the
# vendored Chef::Property calls, Chef.deprecated, as a warning on stderr. Chef's pulls in the run
# context, the provider maps and most of Chef.
require_relative "log"

class Chef
  def self.deprecated(type, message, location = nil)
    Chef::Log.warn("deprecation (#{type}): #{message} #{location}")
  end
end
