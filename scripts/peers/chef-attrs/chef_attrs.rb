#!/usr/bin/env ruby
# The test oracle for netgw's static evaluation of attribute files (tests/it/chef_attrs.rs): loads a
# cookbook repository's attribute files in chef-client's order with Chef's own node-attribute code
# (vendored in lib/, see SOURCE) and prints the node's attributes as JSON. Only tests run this; netgw
# never runs Ruby.
#
#   ruby chef_attrs.rb < REQUEST.json
#   REQUEST: {"root": DIR (holds cookbooks/), "run_list": ["cb", "cb::recipe", ...],
#             "automatic": {...}, "normal": {...}, "role_default": {...}, "env_default": {...},
#             "role_override": {...}, "env_override": {...},
#             "name": NODE_NAME}   (all but root and run_list optional)
#   OUTPUT:  {"cookbook_order": [...], "files": [...], "merged": {...},
#             "default": {...}, "normal": {...}, "override": {...}, "automatic": {...}}
#   A Ruby error in an attribute file: exit 1, {"error": CLASS, "message": ..., "file": ..., "line": N}.
$LOAD_PATH.unshift File.join(__dir__, "lib")
require "json"
require "forwardable"
require "delegate"
require "chef/decorator"
require "chef/mash"
require "chef/node/attribute"
require "chef-utils" # before the autoload in platform_introspection.rb: chef-utils/mash.rb already defined ChefUtils
require "chef/version_constraint/platform"
require "chef/dsl/platform_introspection"

# The parts of Chef::Node (lib/chef/node.rb, same commit) an attribute file sees: attribute files
# are instance_eval'ed on the node (Chef::Mixin::FromFile#from_file), so `default`, `node`,
# `node['x']`, `force_default`, `default_unless` ... are the node's methods below.
class OracleNode
  # Chef::Node's platform helpers (platform?, value_for_platform, ..., and chef-utils' debian? & co.),
  # as the recipe and attribute-file DSL has them.
  include Chef::DSL::PlatformIntrospection
  extend Forwardable
  def_delegators :attributes, :keys, :each_key, :each_value, :key?, :has_key?
  def_delegators :attributes, :rm, :rm_default, :rm_normal, :rm_override
  def_delegators :attributes, :default!, :normal!, :override!, :force_default!, :force_override!
  def_delegators :attributes, :default_unless, :normal_unless, :override_unless, :set_unless
  def_delegators :attributes, :read, :read!, :write, :write!, :unlink, :unlink!

  attr_reader :attributes

  def initialize
    @attributes = Chef::Node::Attribute.new({}, {}, {}, {}, self)
  end

  # Chef::Node#name's reader (lib/chef/node.rb): the node's name, not an attribute.
  attr_accessor :name

  def node
    self
  end

  # No run context: attribute-change events (Chef::Node::Mixin::StateTracking) go nowhere.
  def run_context
    nil
  end

  def [](attrib)
    attributes[attrib]
  end

  def normal
    attributes.normal
  end

  def default
    attributes.default
  end

  def override
    attributes.override
  end

  def attribute?(attrib)
    attributes.attribute?(attrib)
  end

  def method_missing(method, *args, &block)
    attributes.public_send(method, *args, &block)
  end

  def respond_to_missing?(method, include_private = false)
    attributes.respond_to?(method, false)
  end

  def from_file(filename)
    instance_eval(IO.read(filename), filename, 1)
  end

  # The compiler that resolves and records attribute files (Chef's run context).
  attr_accessor :compiler

  # Chef::DSL::IncludeAttribute#include_attribute and #parse_attribute_file_spec (same commit), with
  # the run context's loaded_fully_qualified_attribute?/loaded_attribute/resolve_attribute.
  def include_attribute(*attr_file_specs)
    @loaded_attributes ||= {}
    attr_file_specs.flatten.each do |attr_file_spec|
      cookbook_name, attr_file = parse_attribute_file_spec(attr_file_spec)
      next if @loaded_attributes.key?("#{cookbook_name}::#{attr_file}")

      @loaded_attributes["#{cookbook_name}::#{attr_file}"] = true
      compiler.load_attribute_file(compiler.resolve_attribute(cookbook_name, attr_file))
    end
    true
  end

  def parse_attribute_file_spec(file_spec)
    if match = file_spec.match(/(.+?)::(.+)/)
      [match[1], match[2]]
    else
      [file_spec, "default"]
    end
  end
end

# Chef::Cookbook::Metadata's DSL as far as cookbook order needs it: name and depends are recorded,
# every other statement (maintainer, recipe, attribute, ...) is accepted and ignored. The test
# fixtures keep metadata.rb but not the READMEs that `long_description IO.read(...)` reads, so IO
# inside metadata.rb reads an empty string.
class OracleMetadata
  attr_reader :dependencies

  def initialize
    @dependencies = {}
  end

  def depends(cookbook, *constraints)
    @dependencies[cookbook.to_s] = constraints
  end

  def method_missing(*_args, &_block)
    nil
  end

  def respond_to_missing?(*)
    true
  end

  def self.load(dir)
    md = new
    rb = File.join(dir, "metadata.rb")
    if File.file?(rb)
      md.singleton_class.const_set(:IO, Class.new { def self.read(*) = "" })
      md.instance_eval(File.read(rb), rb, 1)
    elsif File.file?(json = File.join(dir, "metadata.json"))
      (JSON.parse(File.read(json))["dependencies"] || {}).each { |k, v| md.depends(k, v) }
    end
    md
  end
end

# Chef::RunContext::CookbookCompiler (lib/chef/run_context/cookbook_compiler.rb, same commit):
# cookbook_order/add_cookbook_with_deps/each_cookbook_dep and load_attributes_from_cookbook.
class OracleCompiler
  attr_reader :files

  def initialize(root, node)
    @root = root
    @node = node
    @files = []
  end

  def cookbook_dir(name)
    File.join(@root, "cookbooks", name.to_s)
  end

  def cookbook_order(run_list)
    ordered = []
    seen = {}
    run_list.each do |recipe|
      add_cookbook_with_deps(ordered, seen, recipe.split("::", 2).first)
    end
    ordered
  end

  def add_cookbook_with_deps(ordered, seen, cookbook)
    return false if seen.key?(cookbook)

    seen[cookbook] = true
    # A dependency with no directory (netdev, whose resources netgw provides) has no attribute files.
    if File.directory?(cookbook_dir(cookbook))
      OracleMetadata.load(cookbook_dir(cookbook)).dependencies.keys.sort.each do |dep|
        add_cookbook_with_deps(ordered, seen, dep)
      end
    end
    ordered << cookbook
  end

  def load_attributes_from_cookbook(cookbook)
    list = Dir.glob(File.join(cookbook_dir(cookbook), "attributes", "*")).sort
    default_file = list.find { |path| File.basename(path) == "default.rb" }
    if default_file
      list.delete(default_file)
      load_attribute_file_of(cookbook, default_file)
    end
    list.each do |filename|
      next unless File.extname(filename) == ".rb"

      load_attribute_file_of(cookbook, filename)
    end
  end

  # Chef's CookbookCompiler#load_attribute_file goes through include_attribute, so a file an
  # earlier file included is not loaded twice.
  def load_attribute_file_of(cookbook, filename)
    @node.include_attribute("#{cookbook}::#{File.basename(filename, ".rb")}")
  end

  # Chef::RunContext#resolve_attribute: an attribute file of a cookbook by its short name.
  def resolve_attribute(cookbook, short)
    path = File.join(cookbook_dir(cookbook), "attributes", "#{short}.rb")
    raise ArgumentError, "could not find cookbook #{cookbook} while loading attribute #{short}" unless File.directory?(cookbook_dir(cookbook))
    raise ArgumentError, "could not find filename for attribute #{short} in cookbook #{cookbook}" unless File.file?(path)

    path
  end

  def load_attribute_file(filename)
    @files << filename.delete_prefix(@root + "/")
    @node.from_file(filename)
  end
end

def plain(v)
  JSON.parse(JSON.generate(v.respond_to?(:to_hash) ? v.to_hash : v))
end

request = JSON.parse($stdin.read)
node = OracleNode.new
node.name = request["name"]
attrs = node.attributes
%w{automatic normal role_default env_default role_override env_override}.each do |level|
  attrs.public_send("#{level}=", request[level]) if request[level]
end
compiler = OracleCompiler.new(File.expand_path(request.fetch("root")), node)
node.compiler = compiler
order = compiler.cookbook_order(request.fetch("run_list"))
begin
  order.each { |cb| compiler.load_attributes_from_cookbook(cb) }
rescue StandardError, ScriptError => e
  at = e.backtrace_locations&.find { |l| l.path.end_with?(".rb") && l.path.include?("/attributes/") }
  puts JSON.generate({ "error" => e.class.name, "message" => e.message, "file" => at&.path, "line" => at&.lineno })
  exit 1
end
puts JSON.generate({
  "cookbook_order" => order,
  "files" => compiler.files,
  "merged" => plain(attrs.merged_attributes),
  "default" => plain(attrs.combined_default),
  "normal" => plain(attrs.normal),
  "override" => plain(attrs.combined_override),
  "automatic" => plain(attrs.automatic),
})
