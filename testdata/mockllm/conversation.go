package mockllm

import "encoding/json"

// API names, as logged and as matched by a rule's "api".
const (
	APIAnthropic = "anthropic"        // Anthropic Messages
	APIChat      = "openai-chat"      // OpenAI Chat Completions
	APIResponses = "openai-responses" // OpenAI Responses
	APIGemini    = "gemini"           // Gemini generateContent
)

// Conversation is one model request of any API in a common form: what a
// scenario is matched against.
type Conversation struct {
	API      string
	Model    string
	Stream   bool
	System   string
	Tools    []Tool
	Messages []Message
	// Schema is the JSON schema of a structured answer the request asks
	// for (Gemini responseJsonSchema, OpenAI response_format), else nil.
	Schema map[string]any
}

// Tool is one tool the request offers to the model.
type Tool struct {
	Name string `json:"name"`
	// Schema is the JSON schema of its arguments (nil when unknown).
	Schema map[string]any `json:"-"`
	// Custom tools take free-form text, not JSON (OpenAI Responses
	// "custom" tools such as codex's apply_patch).
	Custom bool `json:"custom,omitempty"`
	// Search is a client-side tool search (a Responses "tool_search" tool:
	// codex's): its calls are tool_search_call items, and the tools it
	// finds are offered from then on.
	Search bool `json:"search,omitempty"`
	// Namespace is the Responses namespace the tool was offered in (its
	// Name is "<namespace>__<tool>"), else "".
	Namespace string `json:"-"`
}

// Message is one turn of the conversation: the user's text, the model's
// text and tool calls, or tool results (role "user" in every API here), or
// a message from another agent (role "agent": codex's agent_message items
// other than a subagent's task, which is its "user" prompt).
type Message struct {
	Role     string   `json:"role"`
	Text     string   `json:"text,omitempty"`
	Thinking string   `json:"thinking,omitempty"`
	Calls    []Call   `json:"calls,omitempty"`
	Results  []Result `json:"results,omitempty"`
}

// Call is a tool call made by the model. Args is JSON, or the free-form
// input of a custom tool.
type Call struct {
	ID     string `json:"id,omitempty"`
	Name   string `json:"name"`
	Args   string `json:"args"`
	Custom bool   `json:"custom,omitempty"`
	Search bool   `json:"search,omitempty"` // a call of a Search tool
}

// Result is the output of a tool call sent back to the model.
type Result struct {
	ID     string `json:"id,omitempty"`
	Name   string `json:"name,omitempty"`
	Output string `json:"output"`
	Error  bool   `json:"error,omitempty"`
}

// toolNames lists the names of the tools offered.
func (c *Conversation) toolNames() []string {
	names := make([]string, len(c.Tools))
	for i, t := range c.Tools {
		names[i] = t.Name
	}
	return names
}

// resolveResultNames names each tool result after the call it answers
// when the API does not repeat the name (Anthropic, OpenAI).
func (c *Conversation) resolveResultNames() {
	byID := map[string]string{}
	for i := range c.Messages {
		m := &c.Messages[i]
		for _, call := range m.Calls {
			if call.ID != "" {
				byID[call.ID] = call.Name
			}
		}
		for j := range m.Results {
			if r := &m.Results[j]; r.Name == "" {
				r.Name = byID[r.ID]
			}
		}
	}
}

// addText appends text to the newest message when it has role and holds
// no calls or results, else starts a message.
func (c *Conversation) addText(role, text string) {
	if text == "" {
		return
	}
	if n := len(c.Messages); n > 0 {
		if m := &c.Messages[n-1]; m.Role == role && len(m.Calls) == 0 && len(m.Results) == 0 {
			if m.Text != "" {
				m.Text += "\n"
			}
			m.Text += text
			return
		}
	}
	c.Messages = append(c.Messages, Message{Role: role, Text: text})
}

// addCall appends a call to the newest assistant message (a model turn
// may be sent as several items), else starts one.
func (c *Conversation) addCall(call Call) {
	if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "assistant" {
		c.Messages[n-1].Calls = append(c.Messages[n-1].Calls, call)
		return
	}
	c.Messages = append(c.Messages, Message{Role: "assistant", Calls: []Call{call}})
}

// addResult appends a result to the newest message when it holds
// results, else starts a user message holding it.
func (c *Conversation) addResult(r Result) {
	if n := len(c.Messages); n > 0 && len(c.Messages[n-1].Results) > 0 {
		c.Messages[n-1].Results = append(c.Messages[n-1].Results, r)
		return
	}
	c.Messages = append(c.Messages, Message{Role: "user", Results: []Result{r}})
}

// jsonText is raw JSON that may be a string or anything else: a string is
// returned as is, anything else as its JSON text.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
