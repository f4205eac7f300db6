package i18n

// Messages shared by every area.
func init() {
	Register(map[Key]Text{
		"error.internal": {
			EN: "Something went wrong on my side; the error is logged for the admins.",
			JA: "内部でエラーが発生しました。管理者向けにログを記録しました。",
		},
	})
}
