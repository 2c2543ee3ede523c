#!/usr/bin/env ruby
# The oracle for netgw's reading of Ruby roles and environments (tests/it/chef_attrs.rs): each file
# is read as `knife role from file` / `knife environment from file` reads it (Chef::Role.new then
# #from_file, Chef::Environment.new then #from_file, vendored in lib/, see SOURCE) and printed as
# Chef's #to_h. Only tests run this; netgw never runs Ruby.
#
#   ruby chef_roles.rb role|environment FILE...
#   OUTPUT: {FILE: to_h, ...}; a file Chef refuses: {FILE: {"error": CLASS, "message": ...}}
$LOAD_PATH.unshift File.join(__dir__, "lib")
require "json"
require "chef/exceptions"
require "chef/log"
require "chef/config"
require "chef/mash"
require "chef-utils"
require "chef/role"
require "chef/environment"

kind, *files = ARGV
out = {}
files.each do |f|
  object = kind == "role" ? Chef::Role.new : Chef::Environment.new
  begin
    object.from_file(f)
    out[f] = object.to_h
  rescue Exception => e # rubocop:disable Lint/RescueException
    out[f] = { "error" => e.class.name, "message" => e.message }
  end
end
puts JSON.generate(out)
