# Written for netgw, not ffi-yajl's file: FFI_Yajl::Encoder.encode, which Chef's encryptor
# serializes `{json_wrapper: VALUE}` with, on Ruby's json (compact JSON, symbol keys as strings, as
# ffi-yajl writes it). ffi-yajl is not packaged for Debian.
require "json"

module FFI_Yajl
  class Encoder
    def self.encode(obj, _opts = nil)
      JSON.generate(obj)
    end
  end
end
