# Not Chef's file: chef/chef lib/chef/log.rb needs mixlib-log and Chef's monologger; the vendored
# attribute code only calls Chef::Log.warn/debug/trace, so warnings go to stderr here.
require "logger"
require_relative "exceptions"

class Chef
  class Log
    LOGGER = Logger.new($stderr, level: Logger::WARN)

    %i{trace debug info warn error fatal}.each do |level|
      define_singleton_method(level) { |msg = nil, &block| LOGGER.public_send(level == :trace ? :debug : level, msg, &block) }
    end
  end
end
