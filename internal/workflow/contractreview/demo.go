package contractreview

import (
	"embed"
	"fmt"
)

//go:embed demos/*.txt
var demoFiles embed.FS

// Demo is a sample contract the project wrote for demonstrations and tests.
type Demo struct {
	Name          string
	Filename      string
	Language      string
	OurParty      string
	DomainID      string
	DomainSubtype string
	Text          string
}

// DemoContracts returns the two sample contracts: an English EPC contract on
// FIDIC Silver Book numbering (15 clauses: a mutual liability cap at 10% of
// the Contract Price, an advance payment without a guarantee, a 14-day
// claim notice, 90-day payment, termination for the Employer's
// convenience, an unlimited indemnity) and a Chinese 建设工程施工合同
// excerpt with the same kinds of terms. Both are reviewed for the Contractor.
func DemoContracts() []Demo {
	out := []Demo{
		{Name: "EPC contract, FIDIC Silver Book", Filename: "epc_silver_book_en.txt", Language: "en", OurParty: "Contractor",
			DomainID: DomainFIDIC, DomainSubtype: SubtypeSilverBook},
		{Name: "建设工程施工合同（节选）", Filename: "construction_zh.txt", Language: "zh", OurParty: "承包人"},
	}
	for i := range out {
		b, err := demoFiles.ReadFile("demos/" + out[i].Filename)
		if err != nil {
			panic(fmt.Sprintf("contractreview: embedded demo %s: %v", out[i].Filename, err))
		}
		out[i].Text = string(b)
	}
	return out
}

// Start is the start of a review of the demo.
func (d Demo) Start(taskID string) Start {
	return Start{TaskID: taskID, OurParty: d.OurParty, Language: d.Language, DomainID: d.DomainID, DomainSubtype: d.DomainSubtype,
		Document: TaskDocument{DocumentID: "primary", Filename: d.Filename, Role: RolePrimary, Text: d.Text}}
}
