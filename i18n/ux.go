package i18n

// Messages of the interactive parts: the Undo and Edit buttons of memory notices, the
// memory forms (modals), autocomplete, and browsing with /memory list and /memory show.
func init() {
	Register(map[Key]Text{
		// Buttons of notices.
		"ux.button.undo": {EN: "Undo #%d", JA: "元に戻す #%d"},
		"ux.button.edit": {EN: "Edit #%d", JA: "編集 #%d"},
		"ux.button.broken": {
			EN: "That button or form is not one I recognise; run the command again.",
			JA: "このボタンまたはフォームは認識できません。コマンドをもう一度実行してください。",
		},
		"ux.notfound": {
			EN: "There is no memory #%d that you can see here.",
			JA: "ここであなたが見られる記憶 #%d はありません。",
		},
		"ux.forbidden.server": {
			EN: "Changing this server's memory needs the Manage Server permission or the server's editor role. You can still keep personal memories with scope:personal.",
			JA: "このサーバーの記憶を変更するには「サーバー管理」権限か、サーバーの編集者ロールが必要です。scope:personal で個人の記憶は保存できます。",
		},
		"ux.forbidden.privacy": {
			EN: "Your privacy level is full, so I keep nothing about you, not even by command. Use /privacy level:normal to change that.",
			JA: "プライバシーレベルが full のため、コマンドでも何も保存しません。変更するには /privacy level:normal を使ってください。",
		},
		"ux.change.create":  {EN: "addition", JA: "追加"},
		"ux.change.import":  {EN: "import", JA: "インポート"},
		"ux.change.update":  {EN: "edit", JA: "編集"},
		"ux.change.delete":  {EN: "forget", JA: "削除"},
		"ux.change.recover": {EN: "recovery", JA: "復元"},
		"ux.undo.recovered": {
			EN: "↩️ Undid the %[1]s of #%[2]d: it is back, now version %[3]d: %[4]s",
			JA: "↩️ #%[2]d の%[1]sを取り消しました。記憶は戻り、バージョン %[3]d になりました: %[4]s",
		},
		"ux.undo.forgotten": {
			EN: "↩️ Undid the %[1]s of #%[2]d: it is forgotten. It can be recovered for %[3]s.",
			JA: "↩️ #%[2]d の%[1]sを取り消しました。記憶は削除され、%[3]s の間は復元できます。",
		},
		"ux.undo.restored": {
			EN: "↩️ Undid the %[1]s of #%[2]d: now version %[3]d: %[4]s",
			JA: "↩️ #%[2]d の%[1]sを取り消しました。バージョン %[3]d になりました: %[4]s",
		},
		"ux.undo.already": {
			EN: "That change to #%d was already undone; nothing changed.",
			JA: "#%d へのその変更はすでに取り消されています。何も変更していません。",
		},
		"ux.undo.changed": {
			EN: "Memory #%d changed since this notice (it is at version %d now), so this button no longer applies; see /memory history.",
			JA: "記憶 #%d はこの通知の後に変更されたため（現在のバージョンは %d）、このボタンは使えません。/memory history を見てください。",
		},
		"ux.undo.expired": {
			EN: "This Undo button has expired: changes can be undone from here for %s. /memory history shows what happened.",
			JA: "この「元に戻す」ボタンは期限切れです（有効期間は %s）。経緯は /memory history で確認できます。",
		},

		"ux.duration.days":    {EN: "%d days", JA: "%d日"},
		"ux.duration.hours":   {EN: "%d hours", JA: "%d時間"},
		"ux.duration.minutes": {EN: "%d minutes", JA: "%d分"},
		"ux.duration.seconds": {EN: "%d seconds", JA: "%d秒"},
		"ux.duration.moment":  {EN: "a moment", JA: "一瞬"},

		// Forms.
		"ux.modal.add.title":  {EN: "Remember something", JA: "記憶を追加"},
		"ux.modal.edit.title": {EN: "Edit memory #%d", JA: "記憶 #%d を編集"},
		"ux.modal.content":    {EN: "Content", JA: "内容"},
		"ux.modal.type":       {EN: "Type (optional)", JA: "種類（任意）"},
		"ux.modal.tags":       {EN: "Tags (optional, comma-separated)", JA: "タグ（任意、カンマ区切り）"},
		"ux.modal.tags.placeholder": {
			EN: "raid, schedule",
			JA: "レイド, 予定",
		},
		"ux.modal.invalid.empty": {
			EN: "The content is empty; nothing was saved.",
			JA: "内容が空です。何も保存していません。",
		},
		"ux.modal.invalid.long": {
			EN: "The content is %d characters long; at most %d fit. Nothing was saved.",
			JA: "内容が %d 文字あります。上限は %d 文字です。何も保存していません。",
		},
		"ux.modal.invalid.type": {
			EN: "“%s” is not a type of memory; use one of: %s. Nothing was saved.",
			JA: "「%s」は記憶の種類ではありません。次のいずれかを使ってください: %s。何も保存していません。",
		},
		"ux.modal.invalid.tags": {
			EN: "The tags are longer than %d characters. Nothing was saved.",
			JA: "タグが %d 文字を超えています。何も保存していません。",
		},
		"ux.add.done": {
			EN: "📌 Remembered (%s) #%d: %s",
			JA: "📌 記憶しました（%s）#%d: %s",
		},
		"ux.add.known": {
			EN: "I already remember that as #%d: %s",
			JA: "それはすでに #%d として記憶しています: %s",
		},
		"ux.edit.done": {
			EN: "✏️ Updated (%s) #%d, now version %d: %s",
			JA: "✏️ 更新しました（%s）#%d、バージョン %d: %s",
		},
		"ux.edit.unchanged": {
			EN: "Memory #%d already says exactly that; nothing changed.",
			JA: "記憶 #%d はすでにその内容です。何も変更していません。",
		},
		"ux.edit.conflict": {
			EN: "Memory #%d changed while the form was open (you edited version %d, it is at version %d now). Nothing was saved; open it again to edit the latest version.",
			JA: "フォームを開いている間に記憶 #%d が変更されました（編集したのはバージョン %d、現在はバージョン %d）。何も保存していません。最新の版を編集するにはもう一度開いてください。",
		},
		"ux.scope.server":   {EN: "server", JA: "サーバー"},
		"ux.scope.personal": {EN: "personal", JA: "個人"},

		// Browsing.
		"ux.list.empty": {
			EN: "There are no memories in %s yet.",
			JA: "%sにはまだ記憶がありません。",
		},
		"ux.list.empty.filtered": {
			EN: "There are no memories matching these filters in %s.",
			JA: "%sには、この条件に合う記憶はありません。",
		},
		"ux.place.personal": {EN: "your personal memory", JA: "あなたの個人の記憶"},
		"ux.place.server":   {EN: "this server's memory", JA: "このサーバーの記憶"},
		"ux.origin.dm":      {EN: "from DMs", JA: "DM から"},
		"ux.origin.server":  {EN: "from a server", JA: "サーバーから"},
		"ux.origin.here":    {EN: "from this server", JA: "このサーバーから"},
		"ux.origin.other":   {EN: "from another server", JA: "別のサーバーから"},
		"ux.list.footer": {
			EN: "Page %d of %d · %d memories",
			JA: "%d / %d ページ · 記憶 %d 件",
		},
		"ux.list.prev":          {EN: "◀ Previous", JA: "◀ 前へ"},
		"ux.list.next":          {EN: "Next ▶", JA: "次へ ▶"},
		"ux.list.filters":       {EN: "Filters", JA: "絞り込み"},
		"ux.list.filter.type":   {EN: "type %s", JA: "種類 %s"},
		"ux.list.filter.tag":    {EN: "tag %s", JA: "タグ %s"},
		"ux.list.filter.author": {EN: "by <@%s>", JA: "<@%s> による"},
		"ux.list.badfilter": {
			EN: "That filter is not valid.",
			JA: "その絞り込み条件は無効です。",
		},
		"ux.list.badtag": {
			EN: "A tag filter is at most %d characters, without colons.",
			JA: "タグの絞り込みは %d 文字までで、コロンは使えません。",
		},
		"ux.jump":            {EN: "jump to source message", JA: "元のメッセージへ移動"},
		"ux.show.title":      {EN: "Memory #%d (%s)", JA: "記憶 #%d（%s）"},
		"ux.show.type":       {EN: "Type", JA: "種類"},
		"ux.show.version":    {EN: "Version", JA: "バージョン"},
		"ux.show.importance": {EN: "Importance", JA: "重要度"},
		"ux.show.pinned":     {EN: "Pinned", JA: "固定"},
		"ux.show.tags":       {EN: "Tags", JA: "タグ"},
		"ux.show.from":       {EN: "From", JA: "発言者"},
		"ux.show.where":      {EN: "Learned in", JA: "場所"},
		"ux.show.dm":         {EN: "a direct message", JA: "ダイレクトメッセージ"},
		"ux.show.when":       {EN: "Created", JA: "作成日時"},
		"ux.show.message":    {EN: "Source message", JA: "元のメッセージ"},
		"ux.show.entities":   {EN: "Mentions", JA: "関連するもの"},
		"ux.show.comention":  {EN: "Mentioned with", JA: "一緒に言及されるもの"},
		"ux.show.history":    {EN: "Latest changes", JA: "最近の変更"},
		"ux.show.lifecycle":  {EN: "Lifecycle", JA: "ライフサイクル"},
		"ux.lifecycle.by":    {EN: "%s by #%d", JA: "%s(#%d による)"},
		"ux.lifecycle.with":  {EN: "%s with #%d", JA: "%s(#%d と)"},
		"history.state":      {EN: "lifecycle: %s → %s", JA: "ライフサイクル: %s → %s"},
	})
}
