// Package deviceapi owns the remote device service's REST resources
// (docs/specs/device-hub.md): UserDevice, Profile and its configuration,
// Macro, MacroEvent, DeviceToken, with their exact JSON names, and the REST
// client (go-resty/resty v2) of the four routes, whose POSTs are never
// retried. Decoding is liberal and lossless: each resource keeps its raw
// JSON beside a lenient typed decode (record.go), members the spec does
// not show are kept (Extra) and round-trip unchanged, and a value of an
// unexpected shape is kept as it came with its oddity noted, one item at
// a time. It knows nothing of the hub or of runs.
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
	rec   *record
}

// Profile is the user's active profile of a device.
type Profile struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	UserID        string        `json:"userId"`
	ProfileType   string        `json:"profileType"`
	Configuration Configuration `json:"configuration"`

	Extra map[string]json.RawMessage `json:"-"`
	rec   *record
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
	rec   *record
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
	rec   *record
}

// DeviceToken authenticates a device's hub connection.
type DeviceToken struct {
	ID           string `json:"id"`
	UserDeviceID string `json:"userDeviceId"`
	Token        string `json:"token"`
	IsDisabled   bool   `json:"isDisabled"`

	Extra map[string]json.RawMessage `json:"-"`
	rec   *record
}

// String never shows the token.
func (t DeviceToken) String() string {
	return "DeviceToken{id=" + t.ID + " device=" + t.UserDeviceID + " token=[redacted]}"
}

// GoString never shows the token.
func (t DeviceToken) GoString() string { return t.String() }

var deviceFields = []field[UserDevice]{
	{name: "id", ptr: func(d *UserDevice) any { return &d.ID }},
	{name: "nameOverride", ptr: func(d *UserDevice) any { return &d.NameOverride }},
	{name: "isVerified", ptr: func(d *UserDevice) any { return &d.IsVerified }},
	{name: "isConnected", ptr: func(d *UserDevice) any { return &d.IsConnected }},
	{name: "isListening", ptr: func(d *UserDevice) any { return &d.IsListening }},
	{name: "isAutoListen", ptr: func(d *UserDevice) any { return &d.IsAutoListen }},
	{name: "isOptimisticModel", ptr: func(d *UserDevice) any { return &d.IsOptimisticModel }},
	{name: "currentProfile", ptr: func(d *UserDevice) any { return &d.CurrentProfile }},
}

var profileFields = []field[Profile]{
	{name: "id", ptr: func(p *Profile) any { return &p.ID }},
	{name: "name", ptr: func(p *Profile) any { return &p.Name }},
	{name: "userId", ptr: func(p *Profile) any { return &p.UserID }},
	{name: "profileType", ptr: func(p *Profile) any { return &p.ProfileType }},
	{name: "configuration", ptr: func(p *Profile) any { return &p.Configuration }},
}

var configurationFields = []field[Configuration]{
	{name: "profileType", ptr: func(c *Configuration) any { return &c.ProfileType }},
	{name: "commandKeyMappings", ptr: func(c *Configuration) any { return &c.CommandKeyMappings }},
	{name: "macros", ptr: func(c *Configuration) any { return &c.Macros }},
	{name: "hotkeys", ptr: func(c *Configuration) any { return &c.Hotkeys }},
	{name: "dictationCommands", ptr: func(c *Configuration) any { return &c.DictationCommands }},
	{name: "audioEvents", ptr: func(c *Configuration) any { return &c.AudioEvents }},
}

var macroFields = []field[Macro]{
	{name: "id", ptr: func(m *Macro) any { return &m.ID }},
	{name: "name", ptr: func(m *Macro) any { return &m.Name }},
	{name: "commands", ptr: func(m *Macro) any { return &m.Commands }},
	{name: "events", ptr: func(m *Macro) any { return &m.Events }},
}

var tokenFields = []field[DeviceToken]{
	{name: "id", ptr: func(t *DeviceToken) any { return &t.ID }},
	{name: "userDeviceId", ptr: func(t *DeviceToken) any { return &t.UserDeviceID }},
	{name: "token", ptr: func(t *DeviceToken) any { return &t.Token }},
	{name: "isDisabled", ptr: func(t *DeviceToken) any { return &t.IsDisabled }},
}

// The plain types encode a resource built in Go by its struct tags.
type (
	plainDevice        UserDevice
	plainProfile       Profile
	plainConfiguration Configuration
	plainMacro         Macro
	plainEvent         MacroEvent
	plainToken         DeviceToken
)

func (d *UserDevice) UnmarshalJSON(b []byte) error {
	return unmarshalRecord(b, d, deviceFields, &d.Extra, &d.rec)
}
func (d *UserDevice) decodeRaw(raw json.RawMessage) {
	decodeRecord(raw, d, deviceFields, &d.Extra, &d.rec)
}
func (d UserDevice) MarshalJSON() ([]byte, error) {
	return marshalRecord(&d, deviceFields, d.Extra, d.rec, func() ([]byte, error) { return json.Marshal((*plainDevice)(&d)) })
}

func (p *Profile) UnmarshalJSON(b []byte) error {
	return unmarshalRecord(b, p, profileFields, &p.Extra, &p.rec)
}
func (p *Profile) decodeRaw(raw json.RawMessage) {
	decodeRecord(raw, p, profileFields, &p.Extra, &p.rec)
}
func (p Profile) MarshalJSON() ([]byte, error) {
	return marshalRecord(&p, profileFields, p.Extra, p.rec, func() ([]byte, error) { return json.Marshal((*plainProfile)(&p)) })
}

func (c *Configuration) UnmarshalJSON(b []byte) error {
	return unmarshalRecord(b, c, configurationFields, &c.Extra, &c.rec)
}
func (c *Configuration) decodeRaw(raw json.RawMessage) {
	decodeRecord(raw, c, configurationFields, &c.Extra, &c.rec)
}
func (c Configuration) MarshalJSON() ([]byte, error) {
	return marshalRecord(&c, configurationFields, c.Extra, c.rec, func() ([]byte, error) { return json.Marshal((*plainConfiguration)(&c)) })
}

func (m *Macro) UnmarshalJSON(b []byte) error {
	return unmarshalRecord(b, m, macroFields, &m.Extra, &m.rec)
}
func (m *Macro) decodeRaw(raw json.RawMessage) {
	decodeRecord(raw, m, macroFields, &m.Extra, &m.rec)
}
func (m Macro) MarshalJSON() ([]byte, error) {
	return marshalRecord(&m, macroFields, m.Extra, m.rec, func() ([]byte, error) { return json.Marshal((*plainMacro)(&m)) })
}

// UnmarshalJSON reads the token from `token`, or from `deviceToken` where
// a service answers under that name (the vendor's C++ sample reads it
// there; its other samples read `token`). The member stays as it came.
func (t *DeviceToken) UnmarshalJSON(b []byte) error {
	if err := unmarshalRecord(b, t, tokenFields, &t.Extra, &t.rec); err != nil {
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

func (t DeviceToken) MarshalJSON() ([]byte, error) {
	return marshalRecord(&t, tokenFields, t.Extra, t.rec, func() ([]byte, error) { return json.Marshal((*plainToken)(&t)) })
}
