package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/runner"
)

// TestAPIScoresAreDecimals: the API reads edited scores from the JSON number as written, as
// the console reads its form: a decimal with at most one decimal place, in range, else a 400
// naming the criterion. 0.30000000000000004 is not 0.3 (the console would show 0.3 and the
// total count the rest); 0.3 is stored as 0.3.
func TestAPIScoresAreDecimals(t *testing.T) {
	t.Parallel()
	k, _ := reviewKit(t)
	reviewer := k.api(app.DemoTenant, auth.Reviewer)
	_, st := reviewer.call("GET", "/api/v1/evaluations/ev_demo-bluewater/state", "")
	token := st["review"].(map[string]any)["resume_token"].(string)
	model := map[string]float64{}
	for _, cs := range st["scoring"].(map[string]any)["criteria_scores"].([]any) {
		cs := cs.(map[string]any)
		model[cs["criterion_id"].(string)] = math.Round(cs["score"].(float64)*10) / 10
	}
	resume := func(scores string) (int, map[string]any) {
		return reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume",
			`{"resume_token":"`+token+`","decision":"edit_scores","comment":"site visit","scores":`+scores+`,"editor":{"reviewer_id":"u_reviewer"}}`)
	}
	for scores, want := range map[string]string{
		`{"C2":0.30000000000000004}`: "scores.C2: 0.30000000000000004 has more than one decimal place: scores go in steps of 0.1, as the report shows them",
		`{"C2":0.35}`:                "scores.C2: 0.35 has more than one decimal place",
		`{"C1":7,"C3":5.55}`:         "scores.C3: 5.55 has more than one decimal place",
		`{"C2":-0.5}`:                "scores.C2: -0.5 is below 0",
		`{"C2":10.5}`:                "scores.C2: 10.5 is above the maximum score of",
		`{"C2":3e-1}`:                `scores.C2: "3e-1" is not a decimal number such as 7 or 7.5`,
		`{"C2":"0.3"}`:               "scores.C2 must be a number, not a JSON string",
		`{"C2":null}`:                "scores.C2 must be a number, not null",
	} {
		if code, body := resume(scores); code != http.StatusBadRequest || errCode(body) != "REVIEW_DECISION_INVALID" || !strings.HasPrefix(errMessage(body), want) {
			t.Errorf("scores %s: %d %v, want a 400 saying %q", scores, code, body, want)
		}
	}
	// 0.3, 7 and 7.0 are scores (7.0 written as the program wrote it; 6.0 where the model
	// gave 7 already, so that it is an edit).
	c3 := "7.0"
	if model["C3"] == 7 {
		c3 = "6.0"
	}
	if code, body := resume(`{"C2":0.3,"C3":` + c3 + `}`); code != http.StatusAccepted {
		t.Fatalf("scores 0.3 and %s: %d %v", c3, code, body)
	}
	k.waitJob("ev_demo-bluewater", runner.Succeeded)
	// The decision the thread keeps holds the decimals as sent, not a float's digits.
	req, _ := http.NewRequest(http.MethodGet, k.Srv.URL+"/api/v1/threads/ev_demo-bluewater/state", nil)
	req.Header.Set("Authorization", "Bearer "+reviewer.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var state struct {
		State struct {
			Values struct {
				HumanDecision struct {
					Scores map[string]json.Number `json:"scores"`
				} `json:"human_decision"`
			} `json:"values"`
		} `json:"state"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&state); err != nil {
		t.Fatal(err)
	}
	if got := state.State.Values.HumanDecision.Scores; got["C2"] != "0.3" || got["C3"] != json.Number(strings.TrimSuffix(c3, ".0")) {
		t.Fatalf("the recorded scores: %v, want C2 0.3 and C3 %s", got, c3)
	}
}
