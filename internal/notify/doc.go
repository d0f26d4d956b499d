// Package notify tells a person that a run ended or waits for them, when
// they are not watching: a desktop notification through notify-send (the
// freedesktop notification service's command) and a webhook POST of the
// run's summary signed with a shared secret.
//
// What is sent is a Summary: ids, status, counts, the error code and
// message, the question's kind and text. Inputs, answers and results are
// never part of it, so no secret a run was given can leave the machine
// through a notification.
package notify
