package model

// Protocols are the LLM wire protocols sitter proxy translates between
// (#Protocol in atlas/providers.cue).
var Protocols = []string{"anthropic", "gemini", "openai-chat", "openai-responses"}

// Provider is an LLM provider the proxy can forward to.
type Provider struct {
	ID           string
	Pos          Pos
	DisplayName  string
	Protocol     Named
	BaseURL      string
	Auth         string
	KeyEnv       string
	APIVersion   string
	Params       []Param // sorted by placeholder
	DefaultModel string
	Models       []ModelAlias // sorted by alias
	Limits       Limits
	Evidence     []Evidence
	Note         string
}

// Param fills a {placeholder} of a base URL from an environment variable.
type Param struct{ Name, Env string }

// ModelAlias maps a name a harness sends to the provider's model id.
type ModelAlias struct {
	Alias, Model string
	Pos          Pos
}

// Limits are a provider's sizes the proxy respects.
type Limits struct{ MaxOutputTokens, ContextTokens, MaxToolName int }
