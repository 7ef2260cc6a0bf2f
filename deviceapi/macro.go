package deviceapi

import "encoding/json"

// MacroEvent types, as the spec names them.
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

// EventJoystickMove is the spelling of JoysticksMove in the vendor's real
// sample data; SameEventType treats the two as one type.
const EventJoystickMove = "JoystickMove"

// MacroEventTypes lists every event type the spec names.
var MacroEventTypes = []string{
	EventKeyPress, EventPause, EventType, EventMouseMove, EventJoysticksMove,
	EventPlayAudio, EventKeyRelease, EventStopOutputs, EventKeyToggle, EventDeviceTypeCustomAction,
}

// CanonicalEventType returns the spec's spelling of an event type
// (JoysticksMove for JoystickMove); other types are returned unchanged.
func CanonicalEventType(t string) string {
	if t == EventJoystickMove {
		return EventJoysticksMove
	}
	return t
}

// KnownEventType reports whether t is one of MacroEventTypes or an
// alternative spelling of one (JoystickMove).
func KnownEventType(t string) bool {
	t = CanonicalEventType(t)
	for _, k := range MacroEventTypes {
		if k == t {
			return true
		}
	}
	return false
}

// SameEventType reports whether a and b name the same event type: equal,
// or both spellings of the joystick event. Case matters.
func SameEventType(a, b string) bool { return CanonicalEventType(a) == CanonicalEventType(b) }

// MacroEvent is one event of a macro, with every field the vendor's
// clients show (see docs/deviceapi.md). Pointer fields are nil when the
// member was absent or null; the round trip keeps the two apart. Members
// not typed here stay in Extra.
type MacroEvent struct {
	EventType string `json:"eventType"`

	// KeyPress, KeyRelease, KeyToggle; Pause uses HoldTimeMilliseconds.
	Keys                 []string `json:"keys,omitempty"`
	HoldTimeMilliseconds *float64 `json:"holdTimeMilliseconds,omitempty"`
	IsKeyLatch           *bool    `json:"isKeyLatch,omitempty"`

	// Type: the text to type.
	TypedPhrase *string `json:"typedPhrase,omitempty"`

	// MouseMove. The Unity model has MouseMoveZ, the sample data
	// MouseMoveScroll.
	MouseMoveX      *float64 `json:"mouseMoveX,omitempty"`
	MouseMoveY      *float64 `json:"mouseMoveY,omitempty"`
	MouseMoveZ      *float64 `json:"mouseMoveZ,omitempty"`
	MouseMoveScroll *float64 `json:"mouseMoveScroll,omitempty"`

	// JoysticksMove (JoystickMove): -100..100; an absent axis keeps its value.
	JoystickLeftMoveX  *float64 `json:"joystickLeftMoveX,omitempty"`
	JoystickLeftMoveY  *float64 `json:"joystickLeftMoveY,omitempty"`
	JoystickRightMoveX *float64 `json:"joystickRightMoveX,omitempty"`
	JoystickRightMoveY *float64 `json:"joystickRightMoveY,omitempty"`

	// OutputSpeech is text to speak; AudioFileURL the sound of PlayAudio.
	OutputSpeech *string `json:"outputSpeech,omitempty"`
	AudioFileURL *string `json:"audioFileUrl,omitempty"`

	// DeviceTypeCustomAction: the action's id within the device type, the
	// device type it is meant for, and the open-ended content the user
	// gave with it (e.g. what followed a voice prefix).
	DeviceTypeCustomActionID *string `json:"deviceTypeCustomActionId,omitempty"`
	DeviceTypeID             *string `json:"deviceTypeId,omitempty"`
	AdditionalInputContent   *string `json:"additionalInputContent,omitempty"`
	// IsCustomToggle: toggle the action's held state; IsCustomRelease:
	// release the action if it is held.
	IsCustomToggle  *bool `json:"isCustomToggle,omitempty"`
	IsCustomRelease *bool `json:"isCustomRelease,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
	rec   *record
}

var eventFields = []field[MacroEvent]{
	{name: "eventType", ptr: func(e *MacroEvent) any { return &e.EventType }, eventType: true},
	{name: "keys", ptr: func(e *MacroEvent) any { return &e.Keys }},
	{name: "holdTimeMilliseconds", ptr: func(e *MacroEvent) any { return &e.HoldTimeMilliseconds }},
	{name: "isKeyLatch", ptr: func(e *MacroEvent) any { return &e.IsKeyLatch }},
	{name: "typedPhrase", ptr: func(e *MacroEvent) any { return &e.TypedPhrase }},
	{name: "mouseMoveX", ptr: func(e *MacroEvent) any { return &e.MouseMoveX }},
	{name: "mouseMoveY", ptr: func(e *MacroEvent) any { return &e.MouseMoveY }},
	{name: "mouseMoveZ", ptr: func(e *MacroEvent) any { return &e.MouseMoveZ }},
	{name: "mouseMoveScroll", ptr: func(e *MacroEvent) any { return &e.MouseMoveScroll }},
	{name: "joystickLeftMoveX", ptr: func(e *MacroEvent) any { return &e.JoystickLeftMoveX }},
	{name: "joystickLeftMoveY", ptr: func(e *MacroEvent) any { return &e.JoystickLeftMoveY }},
	{name: "joystickRightMoveX", ptr: func(e *MacroEvent) any { return &e.JoystickRightMoveX }},
	{name: "joystickRightMoveY", ptr: func(e *MacroEvent) any { return &e.JoystickRightMoveY }},
	{name: "outputSpeech", ptr: func(e *MacroEvent) any { return &e.OutputSpeech }},
	{name: "audioFileUrl", ptr: func(e *MacroEvent) any { return &e.AudioFileURL }},
	{name: "deviceTypeCustomActionId", ptr: func(e *MacroEvent) any { return &e.DeviceTypeCustomActionID }},
	{name: "deviceTypeId", ptr: func(e *MacroEvent) any { return &e.DeviceTypeID }},
	{name: "additionalInputContent", ptr: func(e *MacroEvent) any { return &e.AdditionalInputContent }},
	{name: "isCustomToggle", ptr: func(e *MacroEvent) any { return &e.IsCustomToggle }},
	{name: "isCustomRelease", ptr: func(e *MacroEvent) any { return &e.IsCustomRelease }},
}

func (e *MacroEvent) UnmarshalJSON(b []byte) error {
	return unmarshalRecord(b, e, eventFields, &e.Extra, &e.rec)
}
func (e *MacroEvent) decodeRaw(raw json.RawMessage) {
	decodeRecord(raw, e, eventFields, &e.Extra, &e.rec)
}
func (e MacroEvent) MarshalJSON() ([]byte, error) {
	return marshalRecord(&e, eventFields, e.Extra, e.rec, func() ([]byte, error) { return json.Marshal((*plainEvent)(&e)) })
}

// Is reports whether the event is of type t (SameEventType).
func (e MacroEvent) Is(t string) bool { return SameEventType(e.EventType, t) }

// legacyTextKeys are the members Text reads when typedPhrase is absent or
// null: the names hubgate guessed before the vendor's data was known,
// still accepted in hand-written macros.
var legacyTextKeys = []string{"text", "value", "typedText"}

// Text returns the event's typed text: typedPhrase, else the first string
// member of "text", "value" or "typedText".
func (e MacroEvent) Text() string {
	if e.TypedPhrase != nil {
		return *e.TypedPhrase
	}
	for _, k := range legacyTextKeys {
		if raw, ok := e.Extra[k]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
		}
	}
	return ""
}

// CustomAction is the custom action a DeviceTypeCustomAction event
// carries; a nil field of the event is "" or false here.
type CustomAction struct {
	ID           string // deviceTypeCustomActionId
	DeviceTypeID string // deviceTypeId
	Content      string // additionalInputContent
	Toggle       bool   // isCustomToggle
	Release      bool   // isCustomRelease
}

// CustomAction returns the event's custom action. ok is true for a
// DeviceTypeCustomAction event, and for an event of another type that
// carries a non-empty deviceTypeCustomActionId (liberal in what it
// accepts: the sample data sends the field, as null, on every event).
func (e MacroEvent) CustomAction() (a CustomAction, ok bool) {
	a = CustomAction{
		ID:           deref(e.DeviceTypeCustomActionID),
		DeviceTypeID: deref(e.DeviceTypeID),
		Content:      deref(e.AdditionalInputContent),
		Toggle:       e.IsCustomToggle != nil && *e.IsCustomToggle,
		Release:      e.IsCustomRelease != nil && *e.IsCustomRelease,
	}
	return a, e.EventType == EventDeviceTypeCustomAction || a.ID != ""
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
