package domain

// DecideLoginFailed returns the LoginFailed of a refused login from
// remoteAddr with its reason category (a LoginReason…), never the secret
// tried.
func DecideLoginFailed(remoteAddr, reason string, clock Clock) []Event {
	return []Event{NewEvent(clock, TypeLoginFailed, LoginFailed{RemoteAddr: remoteAddr, Reason: reason})}
}

// DecideLoginSucceeded returns the LoginSucceeded of subject's login from
// remoteAddr: the audit record without which no token is handed out.
func DecideLoginSucceeded(subject, remoteAddr string, clock Clock) []Event {
	return []Event{NewEvent(clock, TypeLoginSucceeded, LoginSucceeded{Subject: subject, RemoteAddr: remoteAddr})}
}
