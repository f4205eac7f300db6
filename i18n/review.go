package i18n

// Messages of /memory review (the review queue and its buttons), of the near-duplicate
// answer a save gets when a memory already says the same in other words, and of the review
// line of /kioku status.
func init() {
	Register(map[Key]Text{
		"cmd.memory.review.name": {EN: "review", JA: "見直し"},
		"cmd.memory.review.desc": {
			EN: "What waits for a decision: memories that conflict or repeat, changes kioku proposed",
			JA: "判断を待つもの:食い違う・重複する記憶と、kiokuが提案した変更",
		},

		// The review queue.
		"ux.review.title": {EN: "Waiting for review · %s", JA: "見直し待ち · %s"},
		"ux.review.empty": {EN: "Nothing waits for review in %s.", JA: "%sに見直し待ちはありません。"},
		"ux.review.forbidden": {
			EN: "Reviewing this server's memory needs the Manage Server permission or the server's editor role. /memory review scope:personal shows what waits in your own.",
			JA: "このサーバーの記憶を見直すには「サーバー管理」権限か、サーバーの編集者ロールが必要です。自分の記憶は /memory review scope:personal で見られます。",
		},
		"ux.review.gone": {
			EN: "That item is not waiting for review any more: it was settled, or you can't see it here.",
			JA: "その項目はもう見直し待ちではありません。解決済みか、ここでは見られない項目です。",
		},
		"ux.review.kind.disputed": {
			EN: "**Disputed**: these memories conflict, and nobody has decided which holds.",
			JA: "**対立中**: これらの記憶は食い違っていて、どちらが正しいかまだ決まっていません。",
		},
		"ux.review.kind.disputed.alone": {
			EN: "**Disputed**: the memory it conflicted with is gone.",
			JA: "**対立中**: 食い違っていた相手の記憶はもうありません。",
		},
		"ux.review.kind.conflict": {
			EN: "**Possible contradiction**: kioku's check found that these may say opposite things.",
			JA: "**矛盾の可能性**: kiokuの確認で、これらが反対のことを言っている可能性が見つかりました。",
		},
		"ux.review.kind.similar": {
			EN: "**Near-duplicates**: these say the same thing in other words.",
			JA: "**ほぼ重複**: これらは同じことを別の言葉で言っています。",
		},
		"ux.review.kind.proposal": {
			EN: "**Proposed change**: kioku's background learning proposed it but could not make it on its own.",
			JA: "**変更の提案**: kiokuのバックグラウンド学習が提案しましたが、自分では適用できませんでした。",
		},
		"ux.review.proposed":        {EN: "Proposed new text:", JA: "提案された新しい内容:"},
		"ux.review.proposed.forget": {EN: "Proposed: forget #%d.", JA: "提案: #%d を忘れる。"},
		"ux.review.reason":          {EN: "Why", JA: "理由"},
		"ux.review.footer":          {EN: "Item %[1]d of %[2]d", JA: "%[2]d件中 %[1]d件目"},
		"ux.review.hint.pair": {
			EN: "Keep: both stay · Replace: #%[2]d replaces #%[1]d · Merge: #%[1]d says the text you confirm, #%[2]d is forgotten · Forget: #%[2]d is forgotten",
			JA: "残す: 両方そのまま · 置き換える: #%[2]d が #%[1]d に代わる · まとめる: #%[1]d を確認した内容にし、#%[2]d は忘れる · 忘れる: #%[2]d を忘れる",
		},
		"ux.review.hint.alone": {
			EN: "Keep: #%[1]d stays, no longer disputed · Forget: #%[1]d is forgotten",
			JA: "残す: #%[1]d をそのまま残し、対立を解消 · 忘れる: #%[1]d を忘れる",
		},
		"ux.review.hint.proposal": {
			EN: "Keep: #%[1]d stays as it is · Replace: the proposed change is made · Merge: #%[1]d says the text you confirm · Forget: #%[1]d is forgotten",
			JA: "残す: #%[1]d はそのまま · 置き換える: 提案どおりに変更 · まとめる: #%[1]d を確認した内容にする · 忘れる: #%[1]d を忘れる",
		},
		"ux.review.keep":        {EN: "Keep", JA: "残す"},
		"ux.review.replace":     {EN: "Replace", JA: "置き換える"},
		"ux.review.merge":       {EN: "Merge", JA: "まとめる"},
		"ux.review.forget":      {EN: "Forget", JA: "忘れる"},
		"ux.review.merge.title": {EN: "Merge into #%d", JA: "#%d にまとめる"},
		"ux.review.merge.label": {EN: "What the memory will say", JA: "記憶の新しい内容"},
		"ux.review.done":        {EN: "%s: done.", JA: "%s: 完了しました。"},
		"ux.review.done.none":   {EN: "Nothing changed in the memories; the item is settled.", JA: "記憶は変更せず、項目を解決済みにしました。"},
		"ux.review.done.forgot": {
			EN: "🗑️ Forgot #%d (it can be recovered for %s)",
			JA: "🗑️ #%d を忘れました（%s の間は復元できます）",
		},
		"ux.review.done.superseded": {EN: "🔁 #%d is now superseded by #%d", JA: "🔁 #%d は #%d に置き換えられました"},
		"ux.review.done.changed":    {EN: "✏️ #%d, version %d: %s", JA: "✏️ #%d（バージョン %d）: %s"},

		// The near-duplicate answer of /memory add and Remember this.
		"ux.dup.similar": {
			EN: "🔁 This is similar to #%[1]d, which you can see here:\n> %[2]s\nYours:\n> %[3]s\nNothing is saved yet. **Keep both** saves yours as a new memory; **Replace** saves it in place of #%[1]d; **Merge** lets you write one text into #%[1]d. The choice stays open for %[4]s.",
			JA: "🔁 これは、ここで見られる #%[1]d と似ています:\n> %[2]s\nあなたの内容:\n> %[3]s\nまだ何も保存していません。**両方残す** で新しい記憶として保存、**置き換える** で #%[1]d の代わりに保存、**まとめる** で #%[1]d を一つの内容に書き直します。選択できるのは %[4]s です。",
		},
		"ux.dup.keep":      {EN: "Keep both", JA: "両方残す"},
		"ux.dup.replace":   {EN: "Replace #%d", JA: "#%d を置き換える"},
		"ux.dup.merge":     {EN: "Merge into #%d", JA: "#%d にまとめる"},
		"ux.dup.cancelled": {EN: "Nothing was saved.", JA: "何も保存していません。"},
		"ux.dup.gone": {
			EN: "That save is not waiting any more: it was made, cancelled, or waited too long. Run the command again.",
			JA: "その保存はもう待機していません。実行済み、キャンセル済み、または時間切れです。コマンドをもう一度実行してください。",
		},
		"ux.dup.superseded": {EN: "🔁 #%[1]d is marked superseded by #%[2]d.", JA: "🔁 #%[1]d は #%[2]d に置き換えられたと記録しました。"},
		"ux.dup.not_superseded": {
			EN: "#%d stays as it was: %s",
			JA: "#%d はそのままです: %s",
		},
		"ux.dup.replaced_into": {
			EN: "✏️ #%[1]d now says your words (version %[2]d): %[3]s\n-# A new memory here can't replace one learned in another channel, so #%[1]d took your words.",
			JA: "✏️ #%[1]d をあなたの内容にしました（バージョン %[2]d）: %[3]s\n-# ここで作る新しい記憶は別のチャンネルで覚えた記憶に代われないため、#%[1]d を書き換えました。",
		},
		"ux.dup.merged":    {EN: "🔀 Merged into #%d, now version %d: %s", JA: "🔀 #%d にまとめました（バージョン %d）: %s"},
		"ux.dup.unchanged": {EN: "#%d already says that; nothing was saved.", JA: "#%d はすでにその内容です。何も保存していません。"},

		// /kioku status.
		"status.review":       {EN: "Waiting for review", JA: "見直し待ち"},
		"status.review.value": {EN: "%d: see /memory review", JA: "%d件: /memory review で確認"},
	})
}
