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
// spelled.
//
// # Liberal decoding, one item at a time
//
// Real profiles carry fields of surprising types, and one odd macro must
// never cost the device, the profile or the other macros. Only input
// that is not JSON at all is a decode error. Otherwise each member is
// read as follows (each rule names the vendor fact it follows, read
// 2026-11-26 from Cephable-Unity-Plugin at 2c87af8 and
// Cephable-VirtualController-Sample at d84e58c):
//   - eventType: a name of MacroEventTypes in any case (written back in
//     the spec's spelling, JoystickMove kept as spelled: the sample data
//     spells it so), the number 0..9 of the Unity plugin's C# enum
//     MacroEventType in the spec's order (KeyPress=0 ...
//     DeviceTypeCustomAction=9: CephableModels.cs), or such a number in a
//     string ("0"). Another name is kept as it is: an event type hubgate
//     does not know, for the caller to skip;
//   - numbers: a JSON number, or a JSON number in a string ("100",
//     " 2.5 "): the Unity model's int? fields, written by other clients as
//     strings. NaN, Inf, hex and out-of-range values are not numbers;
//   - strings: a string, or a number read as its literal text (macro ids
//     1 as well as "1": the sample data's ids are "1", "2"...);
//   - booleans: true/false, "true"/"false" in any case, 0/1 and "0"/"1"
//     (the Unity model's isCustomToggle/isCustomRelease are plain bools;
//     a client serialising them as text or numbers is still clear);
//   - lists of strings (keys, commands): a list, [] or null (the sample
//     data sends "commands": []), a null element read as "" and a number
//     element as its text, or a lone string read as a list of one;
//   - null anywhere is the zero value (nil for pointers), and is written
//     back as null (real-service.md: all fields may be null).
//
// A value that cannot be read in its field's type (a macro that is 42,
// "events": "oops", holdTimeMilliseconds [100], eventType 12) leaves the
// field zero and is an Oddity of its item: the value is kept as it came
// and written back as it came while the field stays zero, the rest of the
// item is read, and its siblings are not touched. A macro with an Oddity
// in itself or in one of its events is odd (Macro.IsOdd): it is kept (a
// journal stores it as it came) but not used for matching
// (Configuration.UsableMacros; package rules leaves it out of the
// catalogue). Running a macro with a hole in it could hold a key down
// forever, so one odd event makes the whole macro odd. A device whose
// profile is odd keeps its id and flags; Oddities on each resource list
// every Oddity inside it, naming the item (macro "1" ("Space")) and the
// field, for one warning per item.
//
// A member read in another shape than its field's encoding (0 for
// "KeyPress", "100" for 100) is written back as it came while the field
// still holds what the decode gave it, so a round trip gives back the
// same document; a field changed since is written in its own encoding.
// The decoder works on one copy of the input (member keys and plain
// strings are substrings of it): BenchmarkMacroDecode.
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
