// Package deviceapi owns the remote device service's REST resources
// (docs/specs/device-hub.md): UserDevice, Profile and its
// configuration, Macro, MacroEvent, DeviceToken, with their exact JSON
// names, and the REST client of the four routes. It knows nothing of the
// hub or of runs.
//
// Fields the spec does not show are kept without loss: every resource
// keeps the JSON members it does not type in Extra, and a decode/encode
// round trip gives the same JSON (the same members in the same order and
// spelling, null where null came, [] where [] came, nothing where nothing
// came; see keep.go). The element shapes of the profile's
// commandKeyMappings, hotkeys, dictationCommands and audioEvents are kept
// as raw JSON.
//
// # Macro events as the real app sends them
//
// The spec shows only KeyPress's fields. The vendor's public clients and
// sample data show the rest, and MacroEvent types them (facts read
// 2026-11-24, see docs/real-service.md):
//   - the fields and their types are those of the Unity plugin's model
//     (Cephable/Cephable-Unity-Plugin, CephableModels.cs, class MacroEvent):
//     typedPhrase (Type), mouseMoveX/Y (MouseMove; mouseMoveZ there,
//     mouseMoveScroll in the sample data), joystickLeftMoveX/Y and
//     joystickRightMoveX/Y (-100..100, VirtualController.cs scales them by
//     1/100), outputSpeech, deviceTypeCustomActionId, deviceTypeId and
//     additionalInputContent (DeviceTypeCustomAction: the plugin hands
//     (deviceTypeId, actionId, content) to the game), isCustomToggle,
//     isCustomRelease; audioFileUrl (PlayAudio) comes from the sample data
//     and the plugin's AudioEventModel;
//   - the sample data (Cephable/Cephable-VirtualController-Sample,
//     src/sample-data/*.json: "real user events") sends every one of them
//     as null on a KeyPress, spells the joystick event JoystickMove where
//     the spec and the plugin say JoysticksMove, gives macros ids such as
//     "1", sends "commands": [] and events with only some fields;
//   - the plugin's model has isCustomToggle and isCustomRelease as plain
//     booleans and the numbers as int?; here every vendor field is a
//     pointer (nil: absent or null, kept apart by the round trip) and
//     every number a float64, so that a fraction or an exponent decodes
//     too;
//   - a Type event's text is typedPhrase; Text falls back to "text",
//     "value" and "typedText" (names hubgate used before the facts were
//     known) for macros written by hand;
//   - StopOutputs: the plugin resets every held output (ResetAllStates:
//     keys released, joysticks centred); package bridge follows that;
//   - a custom action is a DeviceTypeCustomAction event; CustomAction also
//     accepts any event with a non-empty deviceTypeCustomActionId.
//
// Members are matched to typed fields by their exact name first, then
// case-insensitively (as encoding/json does), and written back as
// spelled. A typed member of a type no client sends ("typedPhrase": 5) is
// an error naming it (MacroEvent.typedPhrase); members hubgate does not
// type are never an error.
//
// The sample clients register DeviceCommand with one argument (the dotnet
// and browser samples) or two (command, macro: the Unity plugin); the hub
// package decodes either.
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
