# Not Chef's file: the exception classes of chef/chef lib/chef/exceptions.rb (same commit,
# Apache-2.0) that the vendored node-attribute, platform, encrypted data bag item, role and
# environment code raises. The rest of exceptions.rb pulls in most of Chef.
class Chef
  class Exceptions
    # NoSuchAttribute is raised on access by node.read!("foo", "bar") when node["foo"]["bar"] does not exist.
    class NoSuchAttribute < RuntimeError; end
    # AttributeTypeMismatch is raised by node.write!("foo", "bar", "baz") when e.g. node["foo"] = "bar" (overwriting String with Hash)
    class AttributeTypeMismatch < RuntimeError; end

    class InvalidPlatformVersion < ArgumentError; end
    class InvalidCookbookVersion < ArgumentError; end
    class InvalidVersionConstraint < ArgumentError; end

    # Raised by the vendored role, environment, run-list and params_validate code.
    class RoleNotFound < RuntimeError; end
    class DuplicateRole < RuntimeError; end
    class ValidationFailed < ArgumentError; end
    class CannotValidateStaticallyError < ArgumentError; end
    class InvalidEnvironmentRunListSpecification < ArgumentError; end
    class CookbookVersionConflict < ArgumentError; end
    class IllegalVersionConstraint < NotImplementedError; end # rubocop:disable Lint/InheritException
    class InvalidEnvironmentPath < ArgumentError; end
    class EnvironmentNotFound < RuntimeError; end

    # Raised by Chef::JSONCompat.parse (the vendored decryptor's JSON).
    module JSON
      class ParseError < RuntimeError; end
    end

    class ImmutableAttributeModification < NoMethodError
      def initialize
        super "Node attributes are read-only when you do not specify which precedence level to set. " +
          %q{To set an attribute use code like `node.default["key"] = "value"'}
      end
    end
  end
end
