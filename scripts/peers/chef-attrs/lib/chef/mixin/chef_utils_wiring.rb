# Not Chef's file: chef/chef lib/chef/mixin/chef_utils_wiring.rb wires chef-utils to Chef::Config
# and Chef.run_context, which pull in most of Chef. The platform helpers the oracle uses read only
# the node, so the wiring here gives the log and nothing else.
require_relative "../log"

class Chef
  module Mixin
    module ChefUtilsWiring
      private

      def __config
        {}
      end

      def __log
        Chef::Log
      end

      def __transport_connection
        nil
      end
    end
  end
end
