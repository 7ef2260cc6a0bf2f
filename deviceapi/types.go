// Package deviceapi owns the remote device service's REST resources
// (docs/specs/device-hub.md): UserDevice, Profile and its configuration,
// Macro, MacroEvent, DeviceToken, with their exact JSON names, and the REST
// client (go-resty/resty v2) of the four routes, whose POSTs are never retried. Decoding
// is liberal and lossless: members the spec does not show are kept (Extra,
// raw JSON) and round-trip unchanged, and a value of an unexpected shape is
// kept as it came with its oddity noted, one item at a time. It knows
// nothing of the hub or of runs.
//
// Design notes, the vendor's facts followed (macro events as the real app
// sends them) and the choices where the spec is silent: docs/deviceapi.md.
package deviceapi

import "encoding/json"

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
	wire  *wireShape
}

// Profile is the user's active profile of a device.
type Profile struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	UserID        string        `json:"userId"`
	ProfileType   string        `json:"profileType"`
	Configuration Configuration `json:"configuration"`

	Extra map[string]json.RawMessage `json:"-"`
	wire  *wireShape
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
	wire  *wireShape
}

// Macro is a named sequence of events triggered by command strings. Real
// macros have ids such as "1" (not only UUIDs), commands may be [] and
// events may carry only some of their fields.
type Macro struct {
	ID       string       `json:"id"`
	Name     string       `json:"name"`
	Commands []string     `json:"commands"`
	Events   []MacroEvent `json:"events"`

	Extra map[string]json.RawMessage `json:"-"`
	wire  *wireShape
}

// DeviceToken authenticates a device's hub connection.
type DeviceToken struct {
	ID           string `json:"id"`
	UserDeviceID string `json:"userDeviceId"`
	Token        string `json:"token"`
	IsDisabled   bool   `json:"isDisabled"`

	Extra map[string]json.RawMessage `json:"-"`
	wire  *wireShape
}

// String never shows the token.
func (t DeviceToken) String() string {
	return "DeviceToken{id=" + t.ID + " device=" + t.UserDeviceID + " token=[redacted]}"
}

// GoString never shows the token.
func (t DeviceToken) GoString() string { return t.String() }

func (d *UserDevice) UnmarshalJSON(b []byte) error    { return unmarshalKeep(b, d) }
func (d UserDevice) MarshalJSON() ([]byte, error)     { return marshalKeep(&d) }
func (p *Profile) UnmarshalJSON(b []byte) error       { return unmarshalKeep(b, p) }
func (p Profile) MarshalJSON() ([]byte, error)        { return marshalKeep(&p) }
func (c *Configuration) UnmarshalJSON(b []byte) error { return unmarshalKeep(b, c) }
func (c Configuration) MarshalJSON() ([]byte, error)  { return marshalKeep(&c) }
func (m *Macro) UnmarshalJSON(b []byte) error         { return unmarshalKeep(b, m) }
func (m Macro) MarshalJSON() ([]byte, error)          { return marshalKeep(&m) }
func (e *MacroEvent) UnmarshalJSON(b []byte) error    { return unmarshalKeep(b, e) }
func (e MacroEvent) MarshalJSON() ([]byte, error)     { return marshalKeep(&e) }

// UnmarshalJSON reads the token from `token`, or from `deviceToken` where
// a service answers under that name (the vendor's C++ sample reads it
// there; its other samples read `token`). The member stays as it came.
func (t *DeviceToken) UnmarshalJSON(b []byte) error {
	if err := unmarshalKeep(b, t); err != nil {
		return err
	}
	if raw, ok := t.Extra["deviceToken"]; ok && t.Token == "" {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			t.Token = s
		}
	}
	return nil
}

func (t DeviceToken) MarshalJSON() ([]byte, error) { return marshalKeep(&t) }
