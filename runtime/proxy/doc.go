// Package proxy is sitter's local LLM gateway: it accepts requests in one
// wire protocol (Anthropic Messages, OpenAI Chat Completions, OpenAI
// Responses, Gemini generateContent) and forwards them to a provider that
// speaks another, translating requests, responses, streams and errors.
//
// Every protocol has one adapter that decodes its requests and responses
// into a canonical representation (Request, Response, stream Events) and
// encodes them back; a pair of protocols is any two adapters, never a
// pairwise translator. Same-protocol routes pass bytes through untouched.
//
// A stream is complete only when the upstream sent its protocol's terminal
// event (message_stop; [DONE] or a finish_reason; response.completed or
// .incomplete; a Gemini finishReason). One that ends without it, cleanly
// or by a dropped connection, was cut: the client gets its own protocol's
// error event (Anthropic event: error, a Chat error chunk and no [DONE],
// Responses error and response.failed, a Gemini error object) and the
// stream closes. Nothing follows an end or an error, not even a ping.
//
// Stdlib only: the sitter binary imports it, and its hook path must stay
// free of init-time work.
package proxy
