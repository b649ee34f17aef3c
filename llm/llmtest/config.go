package llmtest

import "mentormemory/llm"

// Config points cfg at the fake server at url, with a test key unless cfg
// has one.
func Config(url string, cfg llm.Config) llm.Config {
	cfg.BaseURL = url
	if cfg.APIKey == "" {
		cfg.APIKey = "sk-test-key"
	}
	return cfg
}
