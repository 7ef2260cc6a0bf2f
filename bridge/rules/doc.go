// Package rules owns the routing-rule language of the bridge: which
// DeviceCommand starts which run, with which RunRequest, under which busy
// policy. It is a leaf package (it knows deviceapi and automate's wire
// types, nothing of the hub, the journal or HTTP); configs decodes the
// rules from the configuration file and validates them with Compile, the
// bridge matches and renders them.
//
// # Rules
//
// A rule (Spec) has a name, match criteria, a busy policy and a run
// template. The keys are snake_case in YAML and JSON alike:
//
//	rules:
//	  - name: lights                  # required, unique
//	    match:                        # all given criteria must hold; at least one
//	      command: "lights on"        # exact, case-sensitive
//	      command_glob: "lights *"    # whole text; * ? [a-z] [!a-z] \x
//	      command_regex: '(?i)lights (?P<state>on|off)'  # RE2, whole text
//	      macro_name: Lights          # exact
//	      macro_id: 6f0c...           # exact
//	      event_type: Type            # the macro has an event of this type
//	      custom_action: ask-agent    # the macro has a custom action of this id
//	    busy: queue                   # single (default) | queue | restart
//	    queue_limit: 5                # busy: queue only; default 5
//	    max_age: 10m                  # default 10m
//	    run_on_recovery: false
//	    run:
//	      prompt: "Turn the lights {{.Named.state}}"   # required
//	      client_tools: [notify]      # every RunRequest option, see RunTemplate
//
// The first rule (in configuration order) whose criteria all hold wins.
// Glob: * matches any run of characters including "/", ? one character,
// [...] a class ([!...] or [^...] negated, ranges a-z, a ] right after the
// opening bracket is literal), \x the character x; no other character is
// special. Regex: RE2 syntax, anchored to the whole text (^(?:expr)$);
// (?i) makes it case-insensitive. Macro criteria (macro_name, macro_id,
// event_type, custom_action) never hold for a command without a macro.
// Command texts are compared as delivered: no trimming, no case folding
// (finding the command's macro in the profile is looser: see Catalogue).
//
// Real macros (see deviceapi's package doc for the vendor's facts):
// event_type JoystickMove and JoysticksMove each match both spellings (the
// vendor's sample data says JoystickMove, the spec JoysticksMove);
// custom_action holds when an event of type DeviceTypeCustomAction (or
// any event with a non-empty deviceTypeCustomActionId) has exactly that
// deviceTypeCustomActionId. The two patterns an app user sets up:
//
//	rules:
//	  - name: typed                   # a Type macro: its phrase is the prompt
//	    match: {event_type: Type}
//	    run: {prompt: "{{.TypedText}}"}
//	  - name: ask                     # a custom action: its content is the prompt
//	    match: {custom_action: ask-agent}
//	    run: {prompt: "{{.CustomAction.Content}}"}
//
// Busy policies (what a matched command does while a run is in flight):
// single drops it; queue appends it to a FIFO queue of at most queue_limit
// commands, dropping commands that waited longer than max_age; restart
// cancels the run in flight and then starts. max_age is also the recovery
// age: after a restart of the daemon, waiting commands of a rule with
// run_on_recovery are run when younger than max_age, and marked abandoned
// otherwise. The bridge implements the policies; this package only carries
// them (Rule.Busy, QueueLimit, MaxAge, RunOnRecovery, Expired,
// Recoverable).
//
// # Unmatched commands
//
// UnmatchedSpec: action ignore (the default) journals the command and does
// nothing; action run runs it with the unmatched rule (Set.Unmatched, named
// UnmatchedRuleName), whose run template is optional and whose prompt
// defaults to the command text ({{.Command}}). It has its own busy, queue
// limit, max age and run_on_recovery, with the same defaults.
//
// # Templates
//
// prompt, task_id, additional_workflow_prompt, answer_contract and the
// values of hitl_answers are Go text/templates over TemplateData:
//
//	.Command    string                the command text
//	.Macro      deviceapi.Macro       the macro (zero when none): .Macro.Name, .Macro.ID, .Macro.Commands
//	.HasMacro   bool                  whether there is a macro
//	.Events     []deviceapi.MacroEvent  the macro's events: {{range .Events}}{{.EventType}} {{.Text}}{{end}}
//	.TypedText  string                the typed text (typedPhrase) of the Type events, concatenated
//	.CustomAction deviceapi.CustomAction  the first custom action: .CustomAction.ID
//	                                  (deviceTypeCustomActionId), .DeviceTypeID, .Content
//	                                  (additionalInputContent), .Toggle, .Release; empty when none
//	.CustomActions []deviceapi.CustomAction  every custom action, in order
//	.OutputSpeech string              the events' outputSpeech, non-empty ones joined by a space
//	.Received   time.Time             when the hub delivered it: {{.Received.Format "15:04"}}
//	.Seq        uint64                the hub event's sequence number
//	.Rule       string                the rule's name
//	.Groups     []string              command_regex submatches ({{index .Groups 1}}); nil without a regex
//	.Named      map[string]string     command_regex named groups ({{.Named.state}}); every group is
//	                                  a key ("" when it took no part in the match)
//
// Functions besides text/template's built-ins (the subject comes last, so
// they suit pipelines): json (JSON encoding, e.g. a string quoted for a JSON
// document), lower, upper, trim, join SEP LIST, split SEP S, replace OLD NEW
// S, contains SUB S, hasPrefix P S, hasSuffix P S, default DEF V. Compile
// parses every template and checks field names statically ({{.Comand}} is
// an error at load, inside with and range too when the type is known),
// and the keys of .Named against the named groups of the rule's
// command_regex ({{.Named.colour}} or {{index .Named "colour"}} without a
// group (?P<colour>...) is an error at load, naming the rule, the template
// and the key; the unmatched rule and a rule without command_regex have
// none); range over a number and recursive template calls are rejected,
// and one rendering is limited to 1 MiB. A key that can only be known when
// the command arrives ({{.Macro.Extra.colour}}) and is missing then is a
// render error (missingkey=error): the command fails with that reason and
// never runs with a hole in its prompt. index is the way to probe an
// optional key: {{with index .Macro.Extra "colour"}}...{{end}} skips a
// missing one (Extra holds raw JSON: {{printf "%s" .}} prints it).
// An empty answer_contract rendering sends no contract; a blank prompt
// rendering is a render error (the server would reject it).
//
// Options copied as is: timeout_ms (0: the server default; at least 1000),
// thinking_level (low, medium, high, max; empty: the user's setting),
// restrict_to_workspace, allow_destructive_tools, continuation, include
// {steps, trace, events} (absent keys are true), selected_skill_ids,
// selected_mcp_server_ids, mcp_servers (inline MCP servers in snake_case:
// name, description, transport, url, headers, command, args, env,
// require_approval, disabled_tools; validated with the Automate server's
// rules: names of lowercase letters, digits and hyphens, 1..64, no
// leading, trailing or double hyphen; at most 8), client_tools.
//
// # Client tools
//
// client_tools names the tools hubgate itself executes when the agent
// calls them (the run parks; the bridge answers): the built-in notify
// (NotifyTool: {message: string, level?: info|warning}; ParseNotify) and
// command tools the user declares in command_tools (CommandToolSpec). A
// command tool is off unless enabled: true, and a rule may only list an
// enabled one. It runs one program with an argument vector: argv[0] is
// fixed text, every other element is a template over the call's arguments
// (a JSON object; {{.path}}; a missing key is an error of the call, numbers
// keep their JSON text) and becomes exactly one argument: there is never a
// shell. Set.ToolArgv renders the vector; Set.CommandTool gives timeout,
// workdir and max_output (defaults 30s, "" = the executor's choice,
// 64 KiB). Render puts the definitions (name, description, parameters) of
// the rule's client tools in the request.
//
// # Asking the person
//
// ask: true (Spec.Ask; absent means the bridge.ask default, off) lets the
// rule's runs ask the person a question: the bridge adds the built-in
// ask_person tool (AskPersonTool: {question: string, choices?: [string]};
// ParseAsk) to the run's client tools; no rule lists it in client_tools
// and no command tool may take its name. answers: (Spec.Answers) is an
// RE2 expression, anchored like command_regex, that a hub command must
// match to answer a pending question of the rule's run (Rule.Answers);
// empty means every command answers. A command that does not match is
// routed as usual.
//
// # Catalogue
//
// A DeviceCommand's macro may be missing or carry only an id. Catalog holds
// the macros of the device's current profile; Catalog.Lookup completes a
// command: a delivered macro with content is kept; an id-only macro is
// looked up by id; otherwise (no macro, or an id the profile does not
// know) the command text is looked up among the macros' commands, then
// among their names, trimmed and case-insensitive (the vendor's app may
// send the macro's name "Water Plants" where its commands hold "water
// plants", or a phrase in another case: its Unity client lowercases before
// comparing). Ambiguity is settled by order, never by chance: by id, then
// commands, then name; within one of them the first macro in profile order
// wins, and Catalog.Ambiguities lists every id, phrase or name that several
// macros share (the bridge logs each as a warning when a profile arrives).
// The bridge builds a new Catalog on each DeviceProfileUpdate
// (Set.WithCatalog returns a Set sharing the compiled rules, so nothing is
// recompiled and nothing restarts) and Match and Render complete commands
// from it. Rule criteria (command, macro_name, ...) still compare exactly.
//
// # The routing decision
//
// Set.Decide is the one routing decision, used by the bridge and by
// `hubgate rules test`: complete the command from the catalogue; a
// StopOutputs macro cancels (ActionCancel); custom actions for another
// device type are left out, and a macro left with nothing is refused
// (ActionRefuse); then the first matching rule or the unmatched rule
// renders the request (ActionRun, or ActionError when a template fails),
// else the command is ignored (ActionIgnore). Listening and busy policies
// stay the bridge's.
//
// Device type: Set.WithDeviceType gives the paired device's type. A
// DeviceTypeCustomAction event (or any event with a
// deviceTypeCustomActionId) whose deviceTypeId names another type
// (compared trimmed and case-insensitive) is never run, as the vendor's
// clients run a custom action only on its type: matching and rendering see
// the macro without it (custom_action, event_type, .Events,
// .CustomAction). A macro whose every event is such an action is refused
// with a reason naming both types (*OtherDeviceTypeError), which the
// bridge journals (decision refused) and tells the person. A macro with
// other events goes on without the foreign actions. An empty or null
// deviceTypeId is for any type; without a device type (a pairing state
// that does not record it) nothing is refused.
//
// # Errors
//
// Compile reports every problem at once as *Error, each Problem naming the
// entry and the field: `rules[2] "lights": match.command_regex: error
// parsing regexp: ...`. Render returns *RenderError (`rule "x": run.prompt:
// template: ...`), ToolArgv and ParseNotify *ToolError.
package rules
