# Written for netgw, not Chef's file: the two settings of Chef::Config (chef-config's
# lib/chef-config/config.rb) the vendored encrypted data bag item code reads, with Chef's defaults
# (data_bag_encrypt_version 3, data_bag_decrypt_minimum_version 0). Chef's needs mixlib-config.
class Chef
  class Config
    @settings = { data_bag_encrypt_version: 3, data_bag_decrypt_minimum_version: 0 }

    def self.[](key)
      @settings.fetch(key.to_sym)
    end

    def self.[]=(key, value)
      @settings[key.to_sym] = value
    end
  end
end
