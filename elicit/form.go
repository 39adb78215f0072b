// Package elicit holds elicitation forms: it parses the schema an agent
// requests with elicitation/create (package acpx decodes the request) and
// checks the user's answers against it, and inspects the link of a url
// elicitation before it is shown.
package elicit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Field kinds: what a Field's value is.
const (
	KindString  = "string"  // a string, bounded by length, pattern or format
	KindNumber  = "number"  // a number between Min and Max
	KindInteger = "integer" // a whole number between Min and Max
	KindBoolean = "boolean" // true or false
	KindEnum    = "enum"    // one of Options
	KindMulti   = "multi"   // any of Options
)

// Form is a form elicitation's requestedSchema, its fields in the order
// the agent wrote them.
type Form struct {
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"`
	Fields      []Field `json:"fields"`
}

// Field is one property of a form.
type Field struct {
	Name        string   `json:"name"`
	Kind        string   `json:"kind"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Options     []Option `json:"options,omitempty"`
	Default     any      `json:"default,omitempty"`
	Min         *float64 `json:"min,omitempty"` // number, integer
	Max         *float64 `json:"max,omitempty"`
	MinLength   *int     `json:"min_length,omitempty"` // string
	MaxLength   *int     `json:"max_length,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
	Format      string   `json:"format,omitempty"`
	MinItems    *int     `json:"min_items,omitempty"` // multi
	MaxItems    *int     `json:"max_items,omitempty"`
}

// Option is one choice of an enum or multi-select field.
type Option struct {
	Value       string `json:"value"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// property is a property schema as sent.
type property struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Default     json.RawMessage `json:"default"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"` // MCP's legacy titles
	OneOf       []enumOption    `json:"oneOf"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Pattern     string          `json:"pattern"`
	Format      string          `json:"format"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Items       *struct {
		Enum  []string     `json:"enum"`
		AnyOf []enumOption `json:"anyOf"`
	} `json:"items"`
}

type enumOption struct {
	Const       string `json:"const"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// Bounds of a form the client draws.
const (
	maxFields  = 64
	maxOptions = 256
)

// ParseForm reads a requestedSchema: a flat object of primitive
// properties (string, number, integer, boolean, single- and multi-select
// enums). Defaults that do not fit their field are dropped; a property of
// another type is an error (the form could not be filled in).
func ParseForm(schema json.RawMessage) (Form, error) {
	var s struct {
		Type        string          `json:"type"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		Properties  json.RawMessage `json:"properties"`
		Required    []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return Form{}, fmt.Errorf("requestedSchema: %w", err)
	}
	if s.Type != "" && s.Type != "object" {
		return Form{}, fmt.Errorf("requestedSchema: type %q, not an object", s.Type)
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return Form{}, fmt.Errorf("requestedSchema.properties: %w", err)
	}
	if len(names) > maxFields {
		return Form{}, fmt.Errorf("requestedSchema: %d fields (at most %d)", len(names), maxFields)
	}
	var props map[string]property
	if len(names) > 0 {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return Form{}, fmt.Errorf("requestedSchema.properties: %w", err)
		}
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	f := Form{Title: s.Title, Description: s.Description, Fields: []Field{}}
	for _, name := range names {
		field, err := parseField(name, props[name])
		if err != nil {
			return Form{}, fmt.Errorf("requestedSchema: field %q: %w", name, err)
		}
		field.Required = required[name]
		f.Fields = append(f.Fields, field)
	}
	return f, nil
}

func parseField(name string, p property) (Field, error) {
	f := Field{Name: name, Title: p.Title, Description: p.Description}
	switch p.Type {
	case "string":
		switch {
		case len(p.OneOf) > 0:
			f.Kind = KindEnum
			for _, o := range p.OneOf {
				f.Options = append(f.Options, Option{Value: o.Const, Title: o.Title, Description: o.Description})
			}
		case len(p.Enum) > 0:
			f.Kind = KindEnum
			for i, v := range p.Enum {
				o := Option{Value: v}
				if i < len(p.EnumNames) {
					o.Title = p.EnumNames[i]
				}
				f.Options = append(f.Options, o)
			}
		default:
			f.Kind = KindString
			f.MinLength, f.MaxLength, f.Format = p.MinLength, p.MaxLength, p.Format
			if p.Pattern != "" {
				if _, err := regexp.Compile(p.Pattern); err == nil {
					f.Pattern = p.Pattern
				}
			}
		}
	case "number", "integer":
		f.Kind = p.Type
		f.Min, f.Max = p.Minimum, p.Maximum
	case "boolean":
		f.Kind = KindBoolean
	case "array":
		if p.Items == nil {
			return f, errors.New("an array without items")
		}
		f.Kind = KindMulti
		for _, o := range p.Items.AnyOf {
			f.Options = append(f.Options, Option{Value: o.Const, Title: o.Title, Description: o.Description})
		}
		for _, v := range p.Items.Enum {
			f.Options = append(f.Options, Option{Value: v})
		}
		if len(f.Options) == 0 {
			return f, errors.New("a multi-select without options")
		}
		f.MinItems, f.MaxItems = p.MinItems, p.MaxItems
	default:
		return f, fmt.Errorf("type %q is not supported", p.Type)
	}
	if len(f.Options) > maxOptions {
		return f, fmt.Errorf("%d options (at most %d)", len(f.Options), maxOptions)
	}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		var d any
		if json.Unmarshal(p.Default, &d) == nil {
			if v, err := f.check(d); err == nil {
				f.Default = v
			}
		}
	}
	return f, nil
}

// objectKeys lists the keys of a JSON object in order ("" or null: none).
func objectKeys(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var keys []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// Check validates what the user entered against the form and returns it
// as the agent's content: each value of its field's type (numbers that
// are whole for integers, strings, booleans, lists of strings), fields
// left empty omitted, unknown names dropped. The error names the first
// field that does not fit.
func (f Form) Check(content map[string]any) (map[string]any, error) {
	out := map[string]any{}
	for _, field := range f.Fields {
		v, ok := content[field.Name]
		if ok && !empty(v) {
			x, err := field.check(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", field.label(), err)
			}
			out[field.Name] = x
			continue
		}
		if field.Required {
			return nil, fmt.Errorf("%s is required", field.label())
		}
	}
	return out, nil
}

func (f Field) label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case []string:
		return len(x) == 0
	}
	return false
}

// check validates one value (as decoded from JSON or msgpack).
func (f Field) check(v any) (any, error) {
	switch f.Kind {
	case KindString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("not text: %v", v)
		}
		n := utf8.RuneCountInString(s)
		if f.MinLength != nil && n < *f.MinLength {
			return nil, fmt.Errorf("at least %d characters", *f.MinLength)
		}
		if f.MaxLength != nil && n > *f.MaxLength {
			return nil, fmt.Errorf("at most %d characters", *f.MaxLength)
		}
		if f.Pattern != "" && !regexp.MustCompile(f.Pattern).MatchString(s) {
			return nil, fmt.Errorf("does not match %s", f.Pattern)
		}
		if err := checkFormat(f.Format, s); err != nil {
			return nil, err
		}
		return s, nil
	case KindNumber, KindInteger:
		x, ok := number(v)
		if !ok {
			return nil, fmt.Errorf("not a number: %v", v)
		}
		if f.Kind == KindInteger && x != math.Trunc(x) {
			return nil, fmt.Errorf("not a whole number: %v", x)
		}
		if f.Min != nil && x < *f.Min {
			return nil, fmt.Errorf("at least %v", *f.Min)
		}
		if f.Max != nil && x > *f.Max {
			return nil, fmt.Errorf("at most %v", *f.Max)
		}
		if f.Kind == KindInteger {
			return int64(x), nil
		}
		return x, nil
	case KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("not true or false: %v", v)
		}
		return b, nil
	case KindEnum:
		s, _ := v.(string)
		if !f.hasOption(s) {
			return nil, fmt.Errorf("%q is not one of the choices", s)
		}
		return s, nil
	case KindMulti:
		list, ok := stringList(v)
		if !ok {
			return nil, fmt.Errorf("not a list of choices: %v", v)
		}
		seen := map[string]bool{}
		out := []string{}
		for _, s := range list {
			if !f.hasOption(s) {
				return nil, fmt.Errorf("%q is not one of the choices", s)
			}
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
		if f.MinItems != nil && len(out) < *f.MinItems {
			return nil, fmt.Errorf("choose at least %d", *f.MinItems)
		}
		if f.MaxItems != nil && len(out) > *f.MaxItems {
			return nil, fmt.Errorf("choose at most %d", *f.MaxItems)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown field kind %q", f.Kind)
}

func (f Field) hasOption(s string) bool {
	for _, o := range f.Options {
		if o.Value == s {
			return true
		}
	}
	return false
}

// number reads a JSON or msgpack number (Lua sends integers as ints).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case int8, int16, int32, uint8, uint16, uint32:
		var f float64
		_, err := fmt.Sscan(fmt.Sprint(x), &f)
		return f, err == nil
	}
	return 0, false
}

func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case []string:
		return x, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

var (
	emailRe    = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
	dateRe     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	dateTimeRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$`)
)

func checkFormat(format, s string) error {
	switch format {
	case "email":
		if !emailRe.MatchString(s) {
			return errors.New("not an email address")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return errors.New("not a URI")
		}
	case "date":
		if !dateRe.MatchString(s) {
			return errors.New("not a date (YYYY-MM-DD)")
		}
	case "date-time":
		if !dateTimeRe.MatchString(s) {
			return errors.New("not a date and time (YYYY-MM-DDTHH:MM:SSZ)")
		}
	}
	return nil
}

// URLInfo is what the user is shown of a URL before it is opened.
type URLInfo struct {
	URL      string   `json:"url"`
	Scheme   string   `json:"scheme"`
	Host     string   `json:"host"`
	Opens    bool     `json:"opens"` // http or https: the browser may open it
	Warnings []string `json:"warnings,omitempty"`
}

// InspectURL reads the URL of a url elicitation: its host, whether it may
// be opened (http and https only), and what looks wrong with it.
func InspectURL(raw string) URLInfo {
	info := URLInfo{URL: raw}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		info.Warnings = append(info.Warnings, "it is not a web address; it is not opened")
		return info
	}
	info.Scheme, info.Host = strings.ToLower(u.Scheme), u.Hostname()
	switch info.Scheme {
	case "https":
		info.Opens = true
	case "http":
		info.Opens = true
		if !isLoopback(info.Host) {
			info.Warnings = append(info.Warnings, "not encrypted (http)")
		}
	default:
		info.Warnings = append(info.Warnings, fmt.Sprintf("a %s: address, not a web page; it is not opened", info.Scheme))
	}
	if u.User != nil {
		info.Warnings = append(info.Warnings, "it carries a user name before the host (the real host is "+info.Host+")")
	}
	for _, label := range strings.Split(info.Host, ".") {
		if strings.HasPrefix(strings.ToLower(label), "xn--") {
			info.Warnings = append(info.Warnings, "the host is punycode ("+info.Host+"): it may imitate another")
			break
		}
	}
	for _, r := range info.Host {
		if r > 127 {
			info.Warnings = append(info.Warnings, "the host has non-ASCII characters: it may imitate another")
			break
		}
	}
	if isIP(info.Host) && !isLoopback(info.Host) {
		info.Warnings = append(info.Warnings, "the host is an IP address, not a name")
	}
	return info
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}

func isIP(host string) bool {
	return strings.Contains(host, ":") || regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`).MatchString(host)
}
