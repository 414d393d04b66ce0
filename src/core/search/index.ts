export {parseSearchQuery, type SearchQuery} from './query-language.js'
