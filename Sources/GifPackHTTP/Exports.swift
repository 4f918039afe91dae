// The HTTP value types (HTTPRequest, HTTPHeaders, HTTPError, …) and the HTTPTransport protocol
// live in GifPackTransport, which the portable client links without libcurl; code that imports
// GifPackHTTP keeps seeing them.
@_exported import GifPackTransport
