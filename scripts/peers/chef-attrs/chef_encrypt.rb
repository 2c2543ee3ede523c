#!/usr/bin/env ruby
# Encrypts a data bag item as `knife data bag from file BAG ITEM.json --secret-file SECRET` does
# (Chef::EncryptedDataBagItem.load_secret, then .encrypt_data_bag_item: every value but `id`), with
# Chef's own encryptor (vendored in lib/, see SOURCE), in the format version Chef's
# `data_bag_encrypt_version` setting names. Only tests run this (tests/it/cookbooks.rs,
# tests/it/cookbook_sync.rs); netgw never runs Ruby.
#
#   ruby chef_encrypt.rb VERSION SECRET_FILE < ITEM.json > ENCRYPTED_ITEM.json
$LOAD_PATH.unshift File.join(__dir__, "lib")
require "json"
require "chef/exceptions"
require "chef/encrypted_data_bag_item"

version, secret_file = ARGV
Chef::Config[:data_bag_encrypt_version] = Integer(version)
secret = Chef::EncryptedDataBagItem.load_secret(secret_file)
plain = JSON.parse($stdin.read)
puts JSON.generate(Chef::EncryptedDataBagItem.encrypt_data_bag_item(plain, secret))
