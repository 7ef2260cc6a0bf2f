// Package deviceapi owns the remote device service's REST resources
// (../shared/specs/device-hub.md): UserDevice, Profile and its
// configuration, Macro, MacroEvent, DeviceToken, with their exact JSON
// names, and the REST client of the four routes. It knows nothing of the
// hub or of runs.
//
// Fields the spec does not show are kept without loss: every resource
// keeps the JSON members it does not know in Extra and writes them back
// unchanged, the element shapes of the profile's commandKeyMappings,
// hotkeys, dictationCommands and audioEvents are kept as raw JSON, and a
// MacroEvent of any type keeps all its members.
package deviceapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// UserDevice is a virtual controller of the user.
type UserDevice struct {
	ID                string   `json:"id"`
	NameOverride      string   `json:"nameOverride"`
	IsVerified        bool     `json:"isVerified"`
	IsConnected       bool     `json:"isConnected"`
	IsListening       bool     `json:"isListening"`
	IsAutoListen      bool     `json:"isAutoListen"`
	IsOptimisticModel bool     `json:"isOptimisticModel"`
	CurrentProfile    *Profile `json:"currentProfile"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Profile is the user's active profile of a device.
type Profile struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	UserID        string        `json:"userId"`
	ProfileType   string        `json:"profileType"`
	Configuration Configuration `json:"configuration"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Configuration is a profile's configuration. Element shapes other than
// Macro are not shown by the spec and are kept as raw JSON.
type Configuration struct {
	ProfileType        string            `json:"profileType"`
	CommandKeyMappings []json.RawMessage `json:"commandKeyMappings"`
	Macros             []Macro           `json:"macros"`
	Hotkeys            []json.RawMessage `json:"hotkeys"`
	DictationCommands  []json.RawMessage `json:"dictationCommands"`
	AudioEvents        []json.RawMessage `json:"audioEvents"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Macro is a named sequence of events triggered by command strings.
type Macro struct {
	ID       string       `json:"id"`
	Name     string       `json:"name"`
	Commands []string     `json:"commands"`
	Events   []MacroEvent `json:"events"`

	Extra map[string]json.RawMessage `json:"-"`
}

// MacroEvent types.
const (
	EventKeyPress               = "KeyPress"
	EventPause                  = "Pause"
	EventType                   = "Type"
	EventMouseMove              = "MouseMove"
	EventJoysticksMove          = "JoysticksMove"
	EventPlayAudio              = "PlayAudio"
	EventKeyRelease             = "KeyRelease"
	EventStopOutputs            = "StopOutputs"
	EventKeyToggle              = "KeyToggle"
	EventDeviceTypeCustomAction = "DeviceTypeCustomAction"
)

// MacroEventTypes lists every event type the spec names.
var MacroEventTypes = []string{
	EventKeyPress, EventPause, EventType, EventMouseMove, EventJoysticksMove,
	EventPlayAudio, EventKeyRelease, EventStopOutputs, EventKeyToggle, EventDeviceTypeCustomAction,
}

// MacroEvent is one event of a macro. The fields shown for KeyPress are
// typed; every other member (of any event type) stays in Extra.
type MacroEvent struct {
	EventType            string   `json:"eventType"`
	Keys                 []string `json:"keys,omitempty"`
	HoldTimeMilliseconds *float64 `json:"holdTimeMilliseconds,omitempty"`
	IsKeyLatch           *bool    `json:"isKeyLatch,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Text returns the string member "text" of the event, if any (the typed
// text of a Type event carries it under a name the spec does not show;
// "text" is the common one).
func (e MacroEvent) Text() string {
	for _, k := range []string{"text", "value", "typedText"} {
		if raw, ok := e.Extra[k]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
		}
	}
	return ""
}

// DeviceToken authenticates a device's hub connection.
type DeviceToken struct {
	ID           string `json:"id"`
	UserDeviceID string `json:"userDeviceId"`
	Token        string `json:"token"`
	IsDisabled   bool   `json:"isDisabled"`

	Extra map[string]json.RawMessage `json:"-"`
}

// String never shows the token.
func (t DeviceToken) String() string {
	return "DeviceToken{id=" + t.ID + " device=" + t.UserDeviceID + " token=[redacted]}"
}

// GoString never shows the token.
func (t DeviceToken) GoString() string { return t.String() }

func (d *UserDevice) UnmarshalJSON(b []byte) error    { return unmarshalKeep(b, d, &d.Extra) }
func (d UserDevice) MarshalJSON() ([]byte, error)     { return marshalKeep(&d, d.Extra) }
func (p *Profile) UnmarshalJSON(b []byte) error       { return unmarshalKeep(b, p, &p.Extra) }
func (p Profile) MarshalJSON() ([]byte, error)        { return marshalKeep(&p, p.Extra) }
func (c *Configuration) UnmarshalJSON(b []byte) error { return unmarshalKeep(b, c, &c.Extra) }
func (c Configuration) MarshalJSON() ([]byte, error)  { return marshalKeep(&c, c.Extra) }
func (m *Macro) UnmarshalJSON(b []byte) error         { return unmarshalKeep(b, m, &m.Extra) }
func (m Macro) MarshalJSON() ([]byte, error)          { return marshalKeep(&m, m.Extra) }
func (e *MacroEvent) UnmarshalJSON(b []byte) error    { return unmarshalKeep(b, e, &e.Extra) }
func (e MacroEvent) MarshalJSON() ([]byte, error)     { return marshalKeep(&e, e.Extra) }
func (t *DeviceToken) UnmarshalJSON(b []byte) error   { return unmarshalKeep(b, t, &t.Extra) }
func (t DeviceToken) MarshalJSON() ([]byte, error)    { return marshalKeep(&t, t.Extra) }

// knownFields caches the JSON member names of each struct type.
var knownFields sync.Map // reflect.Type -> map[string]bool

func fieldNames(t reflect.Type) map[string]bool {
	if v, ok := knownFields.Load(t); ok {
		return v.(map[string]bool)
	}
	names := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name != "" && name != "-" {
			names[name] = true
		}
	}
	knownFields.Store(t, names)
	return names
}

// unmarshalKeep decodes b into the typed fields of v (a pointer to a
// struct) and keeps every other member in *extra.
func unmarshalKeep(b []byte, v any, extra *map[string]json.RawMessage) error {
	rv := reflect.ValueOf(v).Elem()
	// Decode through a copy of the struct type without methods, so that
	// json does not call UnmarshalJSON again.
	plain := reflect.New(plainType(rv.Type()))
	if err := json.Unmarshal(b, plain.Interface()); err != nil {
		return err
	}
	for i, j := 0, 0; i < rv.NumField(); i++ {
		if rv.Type().Field(i).Tag.Get("json") == "-" {
			continue
		}
		rv.Field(i).Set(plain.Elem().Field(j))
		j++
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	known := fieldNames(rv.Type())
	*extra = nil
	for k, raw := range all {
		if !known[k] {
			if *extra == nil {
				*extra = map[string]json.RawMessage{}
			}
			(*extra)[k] = raw
		}
	}
	return nil
}

// marshalKeep encodes the typed fields of v followed by the kept members.
func marshalKeep(v any, extra map[string]json.RawMessage) ([]byte, error) {
	rv := reflect.ValueOf(v).Elem()
	plain := reflect.New(plainType(rv.Type())).Elem()
	for i, j := 0, 0; i < rv.NumField(); i++ {
		if rv.Type().Field(i).Tag.Get("json") == "-" {
			continue
		}
		plain.Field(j).Set(rv.Field(i))
		j++
	}
	b, err := json.Marshal(plain.Interface())
	if err != nil || len(extra) == 0 {
		return b, err
	}
	known := fieldNames(rv.Type())
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	for _, k := range sortedKeys(extra) {
		if known[k] {
			continue // a typed field wins over a kept duplicate
		}
		kb, _ := json.Marshal(k)
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// plainTypes caches, per resource type, a struct type with the same
// serialised fields and no methods (building it costs more than decoding).
var plainTypes sync.Map // reflect.Type -> reflect.Type

func plainType(t reflect.Type) reflect.Type {
	if v, ok := plainTypes.Load(t); ok {
		return v.(reflect.Type)
	}
	pt := reflect.StructOf(plainFields(t))
	plainTypes.Store(t, pt)
	return pt
}

// plainFields are the struct's serialised fields.
func plainFields(t reflect.Type) []reflect.StructField {
	var fields []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Tag.Get("json") == "-" {
			continue
		}
		fields = append(fields, reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag})
	}
	return fields
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
