package server

import (
	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/automate/assistant"
)

// decodeBuiltInTools decodes builtInTools ({allow, deny}: arrays of
// built-in tool names or groups) of o, on /v1/runs or in the chat
// extension object. An unknown name or group is a 400 that names it.
func decodeBuiltInTools(o object) (*assistant.ToolFilter, error) {
	const msg = "builtInTools must be an object with arrays of strings allow and deny"
	sub, err := o.sub("builtInTools", msg)
	if err != nil || sub == nil {
		return nil, err
	}
	var b automate.BuiltInTools
	if b.Allow, err = sub.strings("allow", msg); err != nil {
		return nil, err
	}
	if sub.has("allow") && b.Allow == nil {
		b.Allow = []string{} // an empty allow list allows no built-in tool
	}
	if b.Deny, err = sub.strings("deny", msg); err != nil {
		return nil, err
	}
	f, err := assistant.NewToolFilter(&b, "builtInTools")
	if err != nil {
		return nil, invalid("%s", err.Error())
	}
	return f, nil
}
