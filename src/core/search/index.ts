export {parseSearchQuery, type SearchQuery} from './query.js'
