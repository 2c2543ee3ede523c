# Written for netgw, not Chef's file: the settings of Chef::Config (chef-config's
# lib/chef-config/config.rb) the vendored encrypted data bag item and environment code reads, with
# chef-config's defaults (data_bag_encrypt_version 3, data_bag_decrypt_minimum_version 0,
# solo_legacy_mode false). Chef's needs mixlib-config.
class Chef
  class Config
    @settings = { data_bag_encrypt_version: 3, data_bag_decrypt_minimum_version: 0, solo_legacy_mode: false }

    def self.[](key)
      @settings.fetch(key.to_sym)
    end

    def self.[]=(key, value)
      @settings[key.to_sym] = value
    end
  end
end
