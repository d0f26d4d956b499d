package web

import "github.com/browsertask/browsertask/engine"

// Private frames. A profile's sign-in (template profile_sign_in) is a
// person typing a password, a one-time code, answering security
// questions, then landing on their account's pages: its frames are shown
// only while that person has the wheel (the takeover they are in). Once
// they press Done, and before the run first asks for them, the live view
// shows each tab's title and address with a placeholder instead of
// frames; nothing is streamed, the browser's last frames are dropped
// (Live.ForgetFrames) and the finished run's page shows no still. Other
// runs, a profile's agent runs included, keep the general rule (typed
// secrets are obscured in the page itself, browser.TypeSecret): an agent
// reading a signed-in page is what its owner asked to watch.

// profileSignInTemplate is the template whose frames are private.
const profileSignInTemplate = engine.SignInTemplate

// Placeholders for private frames.
const (
	privateFramesNote = "Hidden: a sign-in's frames show only to the person who has taken over, as they may show what was typed."
	privateFramesOver = "The run is over. A sign-in's frames are not kept: they may show what the person typed."
)

// framesPrivate reports whether run's frames show only during a takeover.
func framesPrivate(run *engine.Run) bool { return run.TemplateID == profileSignInTemplate }
