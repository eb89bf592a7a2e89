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
// Stdlib only: the sitter binary imports it, and its hook path must stay
// free of init-time work.
package proxy
