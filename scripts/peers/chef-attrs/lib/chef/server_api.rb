# Written for netgw, not Chef's file: the vendored Chef::Role and Chef::Environment require
# lib/chef/server_api.rb for their load/save methods, which the oracle never calls (no server).
class Chef
  class ServerAPI
    def initialize(*)
      raise NotImplementedError, "the oracle has no Chef server"
    end
  end
end
