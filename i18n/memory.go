package i18n

// Replies of the /memory commands and the "Remember this" message menu.
func init() {
	Register(map[Key]Text{
		"scope.describe.server":   {EN: "this server's memory", JA: "このサーバーの記憶"},
		"scope.describe.personal": {EN: "your personal memory", JA: "あなたの個人の記憶"},
		"actor.pipeline":          {EN: "kioku's background pipeline", JA: "kiokuのバックグラウンド処理"},
		"actor.discord":           {EN: "Discord (a message was deleted)", JA: "Discord(メッセージが削除されました)"},
		"actor.model":             {EN: "kioku (talking with <@%s>)", JA: "kioku(<@%s> との会話中)"},
		"button.cancel":           {EN: "Cancel", JA: "キャンセル"},
		"button.cancelled":        {EN: "Cancelled; nothing was changed.", JA: "キャンセルしました。何も変更していません。"},
		"error.old_button":        {EN: "That button is from an older version of kioku; run the command again.", JA: "そのボタンは古いバージョンのkiokuのものです。コマンドをもう一度実行してください。"},
		"error.broken_button":     {EN: "That button is broken; run the command again.", JA: "そのボタンは壊れています。コマンドをもう一度実行してください。"},
		"error.id":                {EN: "Give the memory's number with id: (as shown by /memory list).", JA: "id: で記憶の番号を指定してください(/memory list に表示される番号)。"},

		// /memory list and show
		"list.none":                {EN: "There are no memories in %s yet.", JA: "%sにはまだ記憶がありません。"},
		"list.none.type":           {EN: "There are no %[1]s memories in %[2]s yet.", JA: "%[2]sにはまだ「%[1]s」の記憶がありません。"},
		"list.footer":              {EN: "Page %d of %d · %s", JA: "%d / %d ページ · %s"},
		"list.previous":            {EN: "◀ Previous", JA: "◀ 前へ"},
		"list.next":                {EN: "Next ▶", JA: "次へ ▶"},
		"line.from_dms":            {EN: "from DMs", JA: "DMから"},
		"line.from_a_server":       {EN: "from a server", JA: "サーバーから"},
		"line.from_this_server":    {EN: "from this server", JA: "このサーバーから"},
		"line.from_another_server": {EN: "from another server", JA: "別のサーバーから"},
		"show.title":               {EN: "Memory #%d (%s)", JA: "記憶 #%d(%s)"},
		"show.type":                {EN: "Type", JA: "種類"},
		"show.importance":          {EN: "Importance", JA: "重要度"},
		"show.decayed":             {EN: "%s (decayed from %s)", JA: "%s(%s から減衰)"},
		"show.version":             {EN: "Version", JA: "版"},
		"show.source":              {EN: "Source", JA: "出所"},
		"show.created":             {EN: "Created", JA: "作成"},
		"show.updated":             {EN: "Updated", JA: "更新"},
		"show.pinned":              {EN: "Pinned", JA: "固定"},
		"show.yes":                 {EN: "yes", JA: "はい"},
		"show.tags":                {EN: "Tags", JA: "タグ"},
		"show.from":                {EN: "From", JA: "発言者"},
		"show.learned_in":          {EN: "Learned in", JA: "学んだ場所"},
		"show.mentions":            {EN: "Mentions", JA: "登場するもの"},

		// /memory search
		"search.error.query":         {EN: "Tell me what to look for with query:.", JA: "query: で探す語句を指定してください。"},
		"search.none":                {EN: "Nothing in %s matches “%s”.", JA: "%sに「%s」に合うものはありません。"},
		"search.none.filtered":       {EN: "Nothing in %s matches “%s” with these filters.", JA: "この条件では、%sに「%s」に合うものはありません。"},
		"search.title":               {EN: "%s matching “%s”", JA: "%s:「%s」の検索結果"},
		"search.footer":              {EN: "%d best matches", JA: "上位 %d 件"},
		"explain.scores":             {EN: "keyword %.2f · meaning %.2f", JA: "キーワード %.2f · 意味 %.2f"},
		"explain.lent":               {EN: "(from #%d)", JA: "(#%d から)"},
		"explain.stage.current":      {EN: "newer, asked about now", JA: "新しさ(現在の質問)"},
		"explain.stage.when":         {EN: "names a date or time", JA: "日時を含む"},
		"explain.stage.month":        {EN: "said in the month asked", JA: "質問の月の発言"},
		"explain.stage.dampening":    {EN: "dampening", JA: "減衰"},
		"explain.stage.date":         {EN: "in the dates asked", JA: "質問の日付"},
		"explain.stage.person":       {EN: "about the person asked", JA: "質問の人物"},
		"explain.stage.graph":        {EN: "linked to what was asked", JA: "質問の対象とつながり"},
		"explain.stage.past":         {EN: "past, asked about now", JA: "過ぎた予定(現在の質問)"},
		"explain.stage.conversation": {EN: "same conversation", JA: "同じ会話"},
		"search.keyword_only":        {EN: "Matched by keywords only: the model budget or rate limit here is spent for now.", JA: "キーワードだけで探しました:ここでのモデルの利用枠(1日の上限か回数制限)に達しています。"},

		// /memory add, edit, recover, history
		"add.already":            {EN: "I already remember that as #%d: %s", JA: "すでに #%d として覚えています:%s"},
		"edit.error.nothing":     {EN: "Tell me what to change: content, type, tags or pinned.", JA: "変更する項目を指定してください:content、type、tags、pinned。"},
		"edit.done":              {EN: "✏️ Updated (%s) #%d, now version %d: %s", JA: "✏️ 更新しました(%s)#%d、現在の版 %d:%s"},
		"recover.done":           {EN: "♻️ Recovered (%s) #%d: %s", JA: "♻️ 復元しました(%s)#%d:%s"},
		"history.title":          {EN: "History of #%d (%s)", JA: "#%d の履歴(%s)"},
		"history.event":          {EN: "**v%d %s** by %s, <t:%d:f>", JA: "**v%d %s** 実行者 %s、<t:%d:f>"},
		"history.may_contradict": {EN: "may contradict: %s", JA: "矛盾の可能性:%s"},
		"history.withheld":       {EN: "(its text was said in a channel you can't view)", JA: "(閲覧できないチャンネルでの内容のため非表示)"},
		"history.not_applied":    {EN: "not applied: %s", JA: "未適用:%s"},

		// /memory forget and forget-me
		"forget.error.both": {EN: "Give either id: or query:, not both.", JA: "id: か query: のどちらか一方を指定してください。"},
		"forget.error.what": {EN: "Tell me what to forget: id: for one memory, or query: to see what matches first.", JA: "忘れるものを指定してください:1件なら id:、合うものを先に確認するなら query:。"},
		"forget.done": {EN: "🗑️ Forgot (%s) #%d: %s\nChanged your mind? /memory recover id:%d%s brings it back for %s.",
			JA: "🗑️ 忘れました(%s)#%d:%s\n気が変わったら /memory recover id:%d%s で%sの間は元に戻せます。"},
		"forget.done.many": {EN: "🗑️ Forgot %[1]s (%[2]s): %[3]s\nRecover any of them with /memory recover id:N%[4]s within %[5]s.",
			JA: "🗑️ %[1]sを忘れました(%[2]s):%[3]s\n%[5]s以内なら /memory recover id:N%[4]s で元に戻せます。"},
		"forget.already_gone":    {EN: "Those memories were already gone; nothing changed.", JA: "それらの記憶はすでにありませんでした。何も変更していません。"},
		"forget.preview.title":   {EN: "Forget %[1]s from %[2]s?", JA: "%[2]sから%[1]sを忘れますか?"},
		"forget.preview.footer":  {EN: "Forgotten memories can be recovered for %s. This confirmation expires in %s.", JA: "忘れた記憶は%sの間復元できます。この確認は%sで期限切れになります。"},
		"forget.preview.confirm": {EN: "Forget these", JA: "これらを忘れる"},
		"forgetme.title":         {EN: "Forget me?", JA: "私を忘れますか?"},
		"forgetme.preview": {
			EN: "This permanently erases everything kioku holds about you:\n" +
				"• %s (forgotten ones included) and their history\n" +
				"• %s about you and %d learned only from your messages\n" +
				"• %s in the transcript\n" +
				"• %s, and your messages in channels' short-term memory\n" +
				"• what %s kept of recent conversations\n\n" +
				"%s you added stay but no longer name you. Unlike forget, this cannot be undone.",
			JA: "kiokuが持つあなたの情報をすべて完全に消去します:\n" +
				"• %s(忘れたものを含む)とその履歴\n" +
				"• %s、およびあなたのメッセージだけから学んだ記憶 %d件\n" +
				"• 会話記録の%s\n" +
				"• %s、およびチャンネルの短期記憶にあるあなたのメッセージ\n" +
				"• %sが保持していた最近の会話\n\n" +
				"あなたが追加した%sは残りますが、あなたの名前は外れます。忘れる操作と違い、元に戻せません。",
		},
		"forgetme.expires": {EN: "This confirmation expires in %s.", JA: "この確認は%sで期限切れになります。"},
		"forgetme.confirm": {EN: "Erase everything about me", JA: "私の情報をすべて消去"},
		"forgetme.done": {
			EN: "Done. I erased %s, %s about you, %s learned from your messages, %s, %s and the saved work of %s; " +
				"%s you added %s you. I don't remember anything about you now.",
			JA: "完了しました。%s、あなたについての%s、あなたのメッセージから学んだ%s、%s、%s、%sの保存内容を消去しました。" +
				"あなたが追加した%s%s。今はあなたについて何も覚えていません。",
		},
		"forgetme.names.one":   {EN: "no longer names", JA: "からあなたの名前を外しました"},
		"forgetme.names.other": {EN: "no longer name", JA: "からあなたの名前を外しました"},

		// Counted things, in the singular and the plural.
		"count.memory.one":            {EN: "%d memory", JA: "記憶 %d件"},
		"count.memory.other":          {EN: "%d memories", JA: "記憶 %d件"},
		"count.personal_memory.one":   {EN: "%d personal memory", JA: "個人の記憶 %d件"},
		"count.personal_memory.other": {EN: "%d personal memories", JA: "個人の記憶 %d件"},
		"count.other_memory.one":      {EN: "%d other memory", JA: "他の記憶 %d件"},
		"count.other_memory.other":    {EN: "%d other memories", JA: "他の記憶 %d件"},
		"count.server_memory.one":     {EN: "%d server memory", JA: "サーバーの記憶 %d件"},
		"count.server_memory.other":   {EN: "%d server memories", JA: "サーバーの記憶 %d件"},
		"count.turn.one":              {EN: "%d conversation turn", JA: "会話のターン %d件"},
		"count.turn.other":            {EN: "%d conversation turns", JA: "会話のターン %d件"},
		"count.stm_entry.one":         {EN: "%d short-term memory entry", JA: "短期記憶 %d件"},
		"count.stm_entry.other":       {EN: "%d short-term memory entries", JA: "短期記憶 %d件"},
		"count.job.one":               {EN: "%d background job", JA: "バックグラウンドジョブ %d件"},
		"count.job.other":             {EN: "%d background jobs", JA: "バックグラウンドジョブ %d件"},
		"count.entry.one":             {EN: "%d entry", JA: "%d件"},
		"count.entry.other":           {EN: "%d entries", JA: "%d件"},
		"count.conversation.one":      {EN: "%d conversation", JA: "会話 %d件"},
		"count.conversation.other":    {EN: "%d conversations", JA: "会話 %d件"},
		"count.problem.one":           {EN: "%d problem", JA: "問題 %d件"},
		"count.problem.other":         {EN: "%d problems", JA: "問題 %d件"},

		// /memory undo
		"undo.error.changed":  {EN: "Memory #%d changed since; see /memory history id:%d%s.", JA: "記憶 #%d はその後変更されています。/memory history id:%d%s を確認してください。"},
		"undo.what":           {EN: "↩️ Undid the %[1]s of (%[2]s) #%[3]d by %[4]s", JA: "↩️ %[4]s による(%[2]s)#%[3]d の%[1]sを取り消しました"},
		"undo.change.create":  {EN: "addition", JA: "追加"},
		"undo.change.import":  {EN: "import", JA: "インポート"},
		"undo.change.update":  {EN: "edit", JA: "編集"},
		"undo.change.delete":  {EN: "forget", JA: "削除"},
		"undo.change.recover": {EN: "recovery", JA: "復元"},
		"undo.recovered":      {EN: "%s: it is back, now version %d: %s", JA: "%s:元に戻りました。現在の版 %d:%s"},
		"undo.forgotten":      {EN: "%s: it is forgotten. /memory recover id:%d%s brings it back for %s.", JA: "%s:忘れられました。/memory recover id:%d%s で%sの間は元に戻せます。"},
		"undo.restored":       {EN: "%s: now version %d: %s", JA: "%s:現在の版 %d:%s"},

		// Remember this
		"remember.already":              {EN: "I already remember that as #%d (%s).", JA: "すでに #%d として覚えています(%s)。"},
		"remember.error.no_text":        {EN: "That message has no text I could remember.", JA: "そのメッセージには覚えられるテキストがありません。"},
		"remember.error.author_private": {EN: "The author of that message asked me not to keep their words, so I can't save it for you. They can save it themselves with /memory add.", JA: "そのメッセージの投稿者は発言を保存しないよう求めているため、保存できません。投稿者自身は /memory add で保存できます。"},
		"remember.error.privacy_full":   {EN: "Your privacy level is full, so I keep nothing of your messages, not even by command. Use /privacy level:normal to change that.", JA: "プライバシーレベルが full のため、コマンドでもあなたのメッセージは何も保存しません。変更するには /privacy level:normal を使ってください。"},
	})
}
