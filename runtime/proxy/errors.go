package proxy

import (
	"encoding/json"
	"net/http"
)

// APIError is a canonical error: the HTTP status it keeps across
// protocols, a message, and the upstream's retry-after.
type APIError struct {
	Status     int
	Message    string
	RetryAfter string
	// Code is a protocol-neutral hint ("insufficient_quota", …), may be "".
	Code string
}

func (e *APIError) Error() string { return http.StatusText(e.Status) + ": " + e.Message }

// anthropicType names the error type of an Anthropic error body. Upstream
// 503 and overload become 529 overloaded_error, which Claude Code retries.
func anthropicStatus(status int) (int, string) {
	switch status {
	case 400:
		return 400, "invalid_request_error"
	case 401:
		return 401, "authentication_error"
	case 402:
		return 402, "billing_error"
	case 403:
		return 403, "permission_error"
	case 404:
		return 404, "not_found_error"
	case 413:
		return 413, "request_too_large"
	case 429:
		return 429, "rate_limit_error"
	case 503, 529:
		return 529, "overloaded_error"
	}
	if status >= 400 && status < 500 {
		return status, "invalid_request_error"
	}
	return status, "api_error"
}

func openAIType(status int, code string) string {
	switch {
	case code == "insufficient_quota":
		return "insufficient_quota"
	case status == 401:
		return "authentication_error"
	case status == 403:
		return "permission_error"
	case status == 404:
		return "not_found_error"
	case status == 429:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func geminiStatus(status int) string {
	switch status {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 413:
		return "INVALID_ARGUMENT"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503, 529:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

// decodeError reads any of the three error body shapes; the message falls
// back to the body itself.
func decodeError(status int, body []byte) *APIError {
	e := &APIError{Status: status}
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil && len(v.Error) > 0 {
		var inner struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
			Type    string `json:"type"`
		}
		if json.Unmarshal(v.Error, &inner) == nil {
			e.Message = inner.Message
			if s, ok := inner.Code.(string); ok {
				e.Code = s
			}
			if e.Code == "" && inner.Type == "insufficient_quota" {
				e.Code = inner.Type
			}
		} else {
			json.Unmarshal(v.Error, &e.Message)
		}
	}
	if e.Message == "" {
		e.Message = string(body)
		if len(e.Message) > 500 {
			e.Message = e.Message[:500]
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// encodeError writes an error body in a protocol's shape and returns the
// status to send with it.
func encodeError(proto string, e *APIError) (int, []byte) {
	var v any
	status := e.Status
	if status == 0 {
		status = 502
	}
	switch proto {
	case Anthropic:
		st, typ := anthropicStatus(status)
		status = st
		v = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": e.Message}}
	case Gemini:
		v = map[string]any{"error": map[string]any{"code": status, "message": e.Message, "status": geminiStatus(status)}}
	default:
		var code any
		if e.Code != "" {
			code = e.Code
		}
		v = map[string]any{"error": map[string]any{"message": e.Message, "type": openAIType(status, e.Code), "param": nil, "code": code}}
	}
	b, _ := json.Marshal(v)
	return status, b
}
