# Written for netgw, not Chef's file: Chef::JSONCompat.parse (lib/chef/json_compat.rb) on Ruby's
# json, for the vendored decryptor. Chef's runs on ffi-yajl, which Debian does not package.
require "json"
require_relative "exceptions"

class Chef
  class JSONCompat
    def self.parse(source, opts = {})
      JSON.parse(source, quirks_mode: true)
    rescue JSON::ParserError => e
      raise Chef::Exceptions::JSON::ParseError, e.message
    end
  end
end
