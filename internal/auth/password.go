package auth

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/trustelem/zxcvbn"
	"github.com/trustelem/zxcvbn/frequency"
)

// Password rules for passwords people choose (a new user's, a reset, a change): long
// enough, at most what bcrypt reads, not one of the leaked passwords that zxcvbn's Go port
// (github.com/trustelem/zxcvbn) ships as its "passwords" frequency list, and strong enough
// by its estimate (score 3 of 4: about 10^8 guesses or more), judged against the user's own
// name and email as well.
const (
	MinPasswordLen   = 10 // characters
	MaxPasswordLen   = 72 // bytes: bcrypt ignores the rest
	MinPasswordScore = 3  // zxcvbn score, 0..4
)

// ErrWeakPassword is a password the rules refuse; the *PasswordError says why.
var ErrWeakPassword = errors.New("password refused")

// PasswordError says why a password was refused, in words for the person choosing it.
type PasswordError struct{ Reason string }

func (e *PasswordError) Error() string { return e.Reason }

// Is makes errors.Is(err, ErrWeakPassword) true.
func (e *PasswordError) Is(target error) bool { return target == ErrWeakPassword }

// breached is zxcvbn's list of leaked passwords, lower-cased, built on first use.
var breached = sync.OnceValue(func() map[string]struct{} {
	list := frequency.FrequencyLists["passwords"]
	m := make(map[string]struct{}, len(list))
	for _, p := range list {
		m[strings.ToLower(p)] = struct{}{}
	}
	return m
})

// CheckPassword applies the password rules to pw; inputs are what the user's own details
// say (name, email), which a guesser tries first.
func CheckPassword(pw string, inputs ...string) error {
	switch {
	case !utf8.ValidString(pw):
		return &PasswordError{"The password is not valid text."}
	case utf8.RuneCountInString(pw) < MinPasswordLen:
		return &PasswordError{fmt.Sprintf("The password needs at least %d characters.", MinPasswordLen)}
	case len(pw) > MaxPasswordLen:
		return &PasswordError{fmt.Sprintf("The password is longer than %d bytes, more than is checked at sign-in.", MaxPasswordLen)}
	}
	if _, ok := breached()[strings.ToLower(pw)]; ok {
		return &PasswordError{"This password is on a list of passwords leaked in breaches: choose another."}
	}
	var words []string
	for _, in := range inputs {
		in = strings.ToLower(in)
		words = append(words, in)
		local, domain, ok := strings.Cut(in, "@")
		if ok {
			words = append(words, local, domain)
		}
		words = append(words, strings.Fields(in)...)
	}
	if r := zxcvbn.PasswordStrength(pw, words); r.Score < MinPasswordScore {
		return &PasswordError{fmt.Sprintf("The password is too easy to guess (strength %d of 4; it needs %d): "+
			"use a longer phrase of unrelated words, not your name, email or a common pattern.", r.Score, MinPasswordScore)}
	}
	return nil
}
