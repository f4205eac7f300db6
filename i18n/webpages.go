package i18n

// The web dashboard's review, graph and health pages (package web). The review page uses the
// words of /memory review (ux.review.*), the health page those of /kioku status and jobs.
func init() {
	Register(map[Key]Text{
		// Review.
		"web.review.title":             {EN: "Waiting for review · %s", JA: "見直し待ち · %s"},
		"web.review.personal":          {EN: "your memory", JA: "自分の記憶"},
		"web.review.count.one":         {EN: "%d item waits for review.", JA: "見直し待ちは %d 件です。"},
		"web.review.count.other":       {EN: "%d items wait for review.", JA: "見直し待ちは %d 件です。"},
		"web.review.open":              {EN: "this item alone", JA: "この項目だけを表示"},
		"web.review.all":               {EN: "Back to the whole queue", JA: "見直し待ちの一覧に戻る"},
		"web.review.privacy.title":     {EN: "Not with your privacy level", JA: "現在のプライバシーレベルではできません"},
		"web.review.privacy":           {EN: "Your privacy level is full, so kioku writes no words into your memory, not even from here: you may keep or forget. /privacy level:normal changes that.", JA: "プライバシーレベルが full のため、ここからも記憶に内容を書き込みません。残すか忘れるかは選べます。変更するには /privacy level:normal を使ってください。"},
		"web.review.merge_empty.title": {EN: "Nothing to merge", JA: "まとめる内容がありません"},
		"web.review.merge_empty":       {EN: "A merge needs the text the memory will say; nothing was changed.", JA: "まとめるには記憶の新しい内容が必要です。何も変更していません。"},

		// Graph.
		"web.graph.title":        {EN: "Graph · %s", JA: "グラフ · %s"},
		"web.graph.search_label": {EN: "Person, place, project or anything named", JA: "人、場所、プロジェクトなどの名前"},
		"web.graph.search":       {EN: "Show", JA: "表示"},
		"web.graph.none":         {EN: "No memory you can see here mentions “%s”.", JA: "ここで見られる記憶に「%s」は出てきません。"},
		"web.graph.caption":      {EN: "%s and what the memories you can see mention with it. Each node opens its page.", JA: "%s と、見られる記憶でいっしょに出てくるもの。各ノードからそのページを開けます。"},
		"web.graph.aliases":      {EN: "Also called", JA: "別名"},
		"web.graph.relations":    {EN: "Relations", JA: "関係"},
		"web.graph.partial":      {EN: "Its other names and relations are not shown: kioku does not record which channel they came from, and some of this server's memories are in channels you can't see.", JA: "別名と関係は表示していません。どのチャンネルから得たものか記録がなく、このサーバーの記憶には見られないチャンネルのものがあるためです。"},
		"web.graph.with":         {EN: "Mentioned with", JA: "いっしょに出てくるもの"},
		"web.graph.shared.one":   {EN: "%d memory", JA: "記憶 %d 件"},
		"web.graph.shared.other": {EN: "%d memories", JA: "記憶 %d 件"},
		"web.graph.memories":     {EN: "Memories that mention it", JA: "これに触れている記憶"},

		// Health.
		"web.health.title":            {EN: "Health · %s", JA: "健全性 · %s"},
		"web.health.findings":         {EN: "Findings", JA: "指摘"},
		"web.health.fix":              {EN: "fix:", JA: "対処:"},
		"web.health.index":            {EN: "Search indexes", JA: "検索インデックス"},
		"web.health.embedding":        {EN: "Embedding tracker (model: embedded/live)", JA: "埋め込みの追跡(モデル: 埋め込み済み/有効)"},
		"web.health.no_embedding":     {EN: "no embedding model", JA: "埋め込みモデルなし"},
		"web.health.words":            {EN: "Word index (rows/live)", JA: "単語インデックス(行/有効)"},
		"web.health.repair":           {EN: "Repair the search indexes", JA: "検索インデックスを修復"},
		"web.health.repair_note":      {EN: "Rebuilds the full-text indexes from the memories, as `kioku reindex` does; at most once an hour.", JA: "`kioku reindex` と同じく記憶から全文インデックスを作り直します。1時間に1回までです。"},
		"web.health.repaired":         {EN: "The search indexes were repaired.", JA: "検索インデックスを修復しました。"},
		"web.health.repair_wait":      {EN: "The search indexes were repaired less than an hour ago; nothing was done.", JA: "検索インデックスは1時間以内に修復済みのため、何もしていません。"},
		"web.health.jobs":             {EN: "This server's background jobs", JA: "このサーバーのバックグラウンドジョブ"},
		"web.health.more_jobs":        {EN: "Only the newest are listed.", JA: "新しいものだけを表示しています。"},
		"web.health.channel":          {EN: "channel %s", JA: "チャンネル %s"},
		"web.health.runs_now":         {EN: "runs now", JA: "まもなく実行"},
		"web.health.runs_at":          {EN: "runs at %s", JA: "%s に実行"},
		"web.health.requeue":          {EN: "Requeue the dead jobs", JA: "失敗したジョブを再実行"},
		"web.health.requeued.one":     {EN: "%d dead job is due again.", JA: "失敗したジョブ %d 件を再実行待ちにしました。"},
		"web.health.requeued.other":   {EN: "%d dead jobs are due again.", JA: "失敗したジョブ %d 件を再実行待ちにしました。"},
		"web.health.budget":           {EN: "Model calls today", JA: "本日のモデル呼び出し"},
		"web.health.budget.value":     {EN: "%d of %d", JA: "%d / %d"},
		"web.health.budget.unlimited": {EN: "%d (no daily limit)", JA: "%d(1日の上限なし)"},
		"web.health.runs":             {EN: "Last maintenance runs", JA: "直近のメンテナンス"},
		"web.health.task":             {EN: "Task", JA: "タスク"},
		"web.health.finished":         {EN: "Finished", JA: "終了"},
		"web.health.outcome":          {EN: "Outcome", JA: "結果"},
		"web.health.run_count":        {EN: "Runs / failures", JA: "実行 / 失敗"},
		"web.health.ok":               {EN: "ok", JA: "成功"},
		"web.health.failed":           {EN: "failed", JA: "失敗"},
		"web.health.repairs":          {EN: "Repairs this week", JA: "今週の修復"},
		"web.health.repair_counts":    {EN: "found %d, changed %d", JA: "検出 %d・変更 %d"},
	})
}
