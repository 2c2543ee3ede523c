//! HTTP JSON APIs (reqwest + rustls): eAPI, iControl REST, the Chef server.
